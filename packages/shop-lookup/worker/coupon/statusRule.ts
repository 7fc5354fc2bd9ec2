// Status rule: is the coupon (or the issued coupon) usable at all, by its status and, for an issued coupon, by the
// traces a use leaves (`use_date`, `shop_order_code`).
import type { Coupon, CouponPolicy, IssuedCoupon } from '../../src/protocol';
import { classifyStatus } from './couponPolicy';
import { PASS, quote, reject, type RuleOutcome } from './ruleOutcome';

const filled = (v: unknown) => v !== undefined && v !== null && String(v).trim() !== '' && v !== 0;

/**
 * The field of an issued coupon's record that shows it was used (its status in `policy.used`, a non-empty
 * `use_date` or `shop_order_code`), or null when the record says unused.
 * @example usedField({ coupon_issue_code: 'IC-1', status: 'complete' }, DEFAULT_COUPON_POLICY) // 'status'
 */
export function usedField(
  issued: IssuedCoupon,
  policy: CouponPolicy,
): 'status' | 'use_date' | 'shop_order_code' | null {
  if (classifyStatus(issued.status, policy) === 'used') return 'status';
  if (filled(issued.use_date)) return 'use_date';
  return filled(issued.shop_order_code) ? 'shop_order_code' : null;
}

/**
 * Issued coupon: used when its status is in `policy.used`, OR it has a non-empty `use_date` or `shop_order_code`
 * (either trace alone is enough: accepting a used coupon costs money, refusing one the cashier can override).
 * Any coupon: `inactive` for a status in `policy.inactive` (a `used` status on a plain coupon reads as inactive
 * too); `unreadable` for a status the policy cannot place (missing, empty or unknown), with the raw value.
 * @example statusRule({ coupon_code: 'A', status: 'stop' }, 'coupon', DEFAULT_COUPON_POLICY).pass // false
 */
export function statusRule(
  record: Coupon | IssuedCoupon,
  kind: 'coupon' | 'issued',
  policy: CouponPolicy,
): RuleOutcome {
  const placed = classifyStatus(record.status, policy);
  if (kind === 'issued') {
    const issued = record as IssuedCoupon;
    const field = usedField(issued, policy);
    if (field !== null) {
      const when = filled(issued.use_date) ? ` on ${String(issued.use_date)}` : '';
      const order = filled(issued.shop_order_code) ? ` (order ${String(issued.shop_order_code)})` : '';
      return reject('status', 'inactive', `This coupon was already used${when}${order}.`, {
        field,
        value: issued[field],
      });
    }
  }
  if (placed === 'active') return PASS;
  if (placed === 'inactive' || placed === 'used') {
    return reject('status', 'inactive', `This coupon is not active (status ${quote(record.status)}).`, {
      field: 'status',
      value: record.status,
    });
  }
  return reject(
    'status',
    'unreadable',
    `The coupon status ${quote(record.status ?? 'missing')} is not one this till knows; check the coupon in the shop admin.`,
    { field: 'status', value: record.status },
  );
}
