// Period rule: is the order inside the coupon's `use_period`? Bounds are inclusive to the precision stated: with
// '~ 2025-12-31 23:59:59' the order at 23:59:59.999 passes and the one at 00:00:00 the next day is expired.
import type { Coupon, IssuedCoupon } from '../../src/protocol';
import { parsePeriod } from './parsePeriod';
import { PASS, quote, reject, type RuleOutcome } from './ruleOutcome';
import { formatShopTime } from './shopTime';

/**
 * `not_started` before the start, `expired` at or after the end's exclusive instant, `unreadable` (with the raw
 * value) when the period cannot be read. `at` is the order's time, epoch ms; naive dates are in `timeZone`.
 * @example periodRule({ coupon_code: 'X', use_period: '2025-01-01 ~ 2025-12-31' }, Date.now(), 'Asia/Seoul')
 */
export function periodRule(record: Coupon | IssuedCoupon, at: number, timeZone: string): RuleOutcome {
  const period = parsePeriod(record.use_period, timeZone);
  const extra = { field: 'use_period', value: record.use_period };
  if (period.kind === 'unreadable') {
    return reject(
      'period',
      'unreadable',
      `The coupon period ${quote(record.use_period)} could not be read; check the coupon in the shop admin.`,
      extra,
    );
  }
  if (period.kind === 'always') return PASS;
  if (period.from !== null && at < period.from) {
    return reject(
      'period',
      'not_started',
      `This coupon can be used from ${formatShopTime(period.from, timeZone)} (${timeZone}); the order is at ${formatShopTime(at, timeZone)}.`,
      extra,
    );
  }
  if (period.until !== null && at >= period.until) {
    return reject(
      'period',
      'expired',
      `This coupon expired: it was valid until ${formatShopTime(period.until - 1000, timeZone)} (${timeZone}); the order is at ${formatShopTime(at, timeZone)}.`,
      extra,
    );
  }
  return PASS;
}
