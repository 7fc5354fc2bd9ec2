// Use-count warning: the coupon has been used as many times as it was issued (`type_coupon_use_count` reached
// `type_coupon_create_count`). The API does not say that the issued count is a limit, so this never refuses: a
// "yes" carries it as a warning for the cashier.
import type { Coupon, IssuedCoupon, VerdictWarning } from '../../src/protocol';
import { formatAmount } from './ruleOutcome';

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * The warning when both counts are numbers, the issued count is > 0 and the use count reached it; else null.
 * For an issued coupon, pass its coupon's record when the till holds it (its counts are the shop's now).
 * @example useCountWarning({ coupon_code: 'X', type_coupon_create_count: 500, type_coupon_use_count: 500 })?.code //
 * 'use_count_reached'
 */
export function useCountWarning(record: Coupon | IssuedCoupon): VerdictWarning | null {
  const issued = count(record.type_coupon_create_count);
  const used = count(record.type_coupon_use_count);
  if (issued === null || used === null || issued <= 0 || used < issued) return null;
  return {
    code: 'use_count_reached',
    message:
      `This coupon has been used ${formatAmount(used)} times, and ${formatAmount(issued)} were issued; ` +
      'the shop API does not say whether that is a limit. Check it in the shop admin if in doubt.',
    field: 'type_coupon_use_count',
    value: record.type_coupon_use_count,
  };
}
