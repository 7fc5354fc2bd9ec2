// Combination rule: may this coupon be added on top of another discount (`is_duplication`)?
import type { Coupon, IssuedCoupon } from '../../src/protocol';
import { PASS, reject, type CheckedOrder, type RuleOutcome } from './ruleOutcome';

/**
 * `not_combinable` when the order already has another discount and `is_duplication` is not true. A null or
 * missing `is_duplication` reads as false (not combinable): the cautious reading, and the same "unset flag is
 * false" rule as `use_app`. Without another discount the flag does not matter.
 * @example combinationRule({ coupon_code: 'A', is_duplication: false }, { otherDiscount: true }).pass // false
 */
export function combinationRule(
  record: Coupon | IssuedCoupon,
  order: Pick<CheckedOrder, 'otherDiscount'>,
): RuleOutcome {
  if (!order.otherDiscount || record.is_duplication === true) return PASS;
  return reject(
    'combination',
    'not_combinable',
    'This coupon cannot be combined with another discount on the same order.',
    {
      field: 'is_duplication',
      value: record.is_duplication,
    },
  );
}
