// Minimum rule: the order must reach `apply_sale_type_minimum_price` (exactly the minimum passes).
import type { Coupon, IssuedCoupon } from '../../src/protocol';
import { formatAmount, PASS, quote, reject, type CheckedOrder, type RuleOutcome } from './ruleOutcome';

/**
 * `below_minimum` when the amount is below the minimum. Missing, null or 0 means no minimum; a negative or
 * non-numeric minimum is `unreadable`.
 * @example minimumRule({ coupon_code: 'W', apply_sale_type_minimum_price: 10000 }, { amount: 9000 }).pass // false
 */
export function minimumRule(record: Coupon | IssuedCoupon, order: Pick<CheckedOrder, 'amount'>): RuleOutcome {
  const minimum = record.apply_sale_type_minimum_price;
  if (minimum === undefined || minimum === null || minimum === 0) return PASS;
  const extra = { field: 'apply_sale_type_minimum_price', value: minimum };
  if (typeof minimum !== 'number' || !Number.isFinite(minimum) || minimum < 0) {
    return reject(
      'minimum',
      'unreadable',
      `The minimum order amount of this coupon (${quote(minimum)}) could not be read.`,
      extra,
    );
  }
  if (order.amount >= minimum) return PASS;
  return reject(
    'minimum',
    'below_minimum',
    `Order ${formatAmount(order.amount)} is below the minimum of ${formatAmount(minimum)} for this coupon.`,
    extra,
  );
}
