// Status rule: is the coupon (or the issued coupon) usable at all, by its status and, for an issued coupon, by the
// traces a use leaves (`use_date`, `shop_order_code`).
import type { Coupon, CouponPolicy, IssuedCoupon } from '../../src/protocol';
import { classifyStatus } from './couponPolicy';
import { PASS, quote, reject, type RuleOutcome } from './ruleOutcome';

const filled = (v: unknown) => v !== undefined && v !== null && String(v).trim() !== '' && v !== 0;

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
    if (placed === 'used' || filled(issued.use_date) || filled(issued.shop_order_code)) {
      const when = filled(issued.use_date) ? ` on ${String(issued.use_date)}` : '';
      const order = filled(issued.shop_order_code) ? ` (order ${String(issued.shop_order_code)})` : '';
      const field = placed === 'used' ? 'status' : filled(issued.use_date) ? 'use_date' : 'shop_order_code';
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
