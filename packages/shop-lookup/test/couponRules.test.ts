import { describe, expect, it } from 'vitest';
import type { Coupon, IssuedCoupon, VerdictDetail } from '../src/types';
import { appRule } from '../worker/coupon/appRule';
import { combinationRule } from '../worker/coupon/combinationRule';
import { DEFAULT_COUPON_POLICY, resolvePolicy } from '../worker/coupon/couponPolicy';
import { decideCoupon, type FoundCoupon } from '../worker/coupon/decideCoupon';
import { discountRule, type DiscountOutcome } from '../worker/coupon/discountRule';
import { freshnessRule } from '../worker/coupon/freshnessRule';
import { minimumRule } from '../worker/coupon/minimumRule';
import { parentRule } from '../worker/coupon/parentRule';
import { periodRule } from '../worker/coupon/periodRule';
import { readOrder } from '../worker/coupon/readOrder';
import { otherTillUseRule } from '../worker/coupon/otherTillUseRule';
import { repeatUseRule } from '../worker/coupon/repeatUseRule';
import { useCountWarning } from '../worker/coupon/useCountWarning';
import type { CheckedOrder, RuleOutcome } from '../worker/coupon/ruleOutcome';
import { statusRule } from '../worker/coupon/statusRule';

const SEOUL = 'Asia/Seoul';
const SETTINGS = { policy: DEFAULT_COUPON_POLICY, timeZone: SEOUL };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** An instant given as Seoul wall-clock time (UTC+9, no DST). */
const kst = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => Date.UTC(y, mo - 1, d, h - 9, mi, s);

const coupon = (fields: Partial<Coupon> = {}): Coupon => ({ coupon_code: 'T', status: 'progress', ...fields });
const issued = (fields: Partial<IssuedCoupon> = {}): IssuedCoupon => ({
  coupon_issue_code: 'IC-T',
  status: 'progress',
  shop_order_code: '',
  use_date: '',
  ...fields,
});
const order = (fields: Partial<CheckedOrder> = {}): CheckedOrder => ({
  amount: 32000,
  orderId: null,
  at: kst(2026, 6, 1, 12),
  app: false,
  otherDiscount: false,
  acceptStale: false,
  acceptRepeatUse: false,
  ...fields,
});
const period = (use_period: unknown, at: number, timeZone = SEOUL) =>
  periodRule(coupon({ use_period: use_period as string }), at, timeZone);
const discount = (fields: Partial<Coupon>, amount: number) => discountRule(coupon(fields), { amount });

/** 'pass', 'discount <n>', or the rejection reason. */
function summary(outcome: RuleOutcome | DiscountOutcome): string {
  if (!outcome.pass) return outcome.reason;
  return 'discount' in outcome ? `discount ${outcome.discount}` : 'pass';
}

interface Case {
  rule: string;
  name: string;
  run: () => RuleOutcome | DiscountOutcome;
  expected: string;
  detail?: Partial<VerdictDetail>;
}

const cases: Case[] = [
  // status
  {
    rule: 'status',
    name: 'progress is usable',
    run: () => statusRule(coupon(), 'coupon', DEFAULT_COUPON_POLICY),
    expected: 'pass',
  },
  {
    rule: 'status',
    name: 'statuses compare case-insensitively',
    run: () => statusRule(coupon({ status: ' PROGRESS ' }), 'coupon', DEFAULT_COUPON_POLICY),
    expected: 'pass',
  },
  {
    rule: 'status',
    name: 'stop is inactive',
    run: () => statusRule(coupon({ status: 'stop' }), 'coupon', DEFAULT_COUPON_POLICY),
    expected: 'inactive',
    detail: { rule: 'status', field: 'status', value: 'stop' },
  },
  {
    rule: 'status',
    name: 'end is inactive',
    run: () => statusRule(coupon({ status: 'end' }), 'coupon', DEFAULT_COUPON_POLICY),
    expected: 'inactive',
  },
  {
    rule: 'status',
    name: 'ready (not started) is inactive',
    run: () => statusRule(coupon({ status: 'ready' }), 'coupon', DEFAULT_COUPON_POLICY),
    expected: 'inactive',
  },
  {
    rule: 'status',
    name: 'an unknown status is unreadable, with the raw value',
    run: () => statusRule(coupon({ status: 'paused' }), 'coupon', DEFAULT_COUPON_POLICY),
    expected: 'unreadable',
    detail: { field: 'status', value: 'paused' },
  },
  {
    rule: 'status',
    name: 'a missing status is unreadable',
    run: () => statusRule({ coupon_code: 'T' }, 'coupon', DEFAULT_COUPON_POLICY),
    expected: 'unreadable',
  },
  {
    rule: 'status',
    name: 'a null status is unreadable',
    run: () => statusRule(coupon({ status: null }), 'coupon', DEFAULT_COUPON_POLICY),
    expected: 'unreadable',
    detail: { value: null },
  },
  {
    rule: 'status',
    name: 'an issued coupon with status complete was used',
    run: () => statusRule(issued({ status: 'complete' }), 'issued', DEFAULT_COUPON_POLICY),
    expected: 'inactive',
    detail: { field: 'status' },
  },
  {
    rule: 'status',
    name: 'an issued coupon with a use_date was used, whatever its status',
    run: () => statusRule(issued({ use_date: '2026-09-15 14:22:05' }), 'issued', DEFAULT_COUPON_POLICY),
    expected: 'inactive',
    detail: { field: 'use_date', message: 'This coupon was already used on 2026-09-15 14:22:05.' },
  },
  {
    rule: 'status',
    name: 'an issued coupon with a shop_order_code was used',
    run: () => statusRule(issued({ shop_order_code: '202609150001234' }), 'issued', DEFAULT_COUPON_POLICY),
    expected: 'inactive',
    detail: { field: 'shop_order_code' },
  },
  {
    rule: 'status',
    name: 'an unused issued coupon is usable',
    run: () => statusRule(issued(), 'issued', DEFAULT_COUPON_POLICY),
    expected: 'pass',
  },
  {
    rule: 'status',
    name: 'a host policy can make ready usable',
    run: () => statusRule(coupon({ status: 'ready' }), 'coupon', resolvePolicy({ active: ['progress', 'ready'] })),
    expected: 'pass',
  },
  {
    rule: 'status',
    name: 'a host policy can add a used status',
    run: () => statusRule(issued({ status: 'Done' }), 'issued', resolvePolicy({ used: ['complete', 'done'] })),
    expected: 'inactive',
  },

  // parent: an issued coupon's coupon, as far as the till knows
  {
    rule: 'parent',
    name: 'an unknown coupon leaves the issued record to decide',
    run: () => parentRule({ state: 'unknown', code: 'SPRING' }, kst(2026, 6, 1), SETTINGS),
    expected: 'pass',
  },
  {
    rule: 'parent',
    name: 'an active coupon in its period passes',
    run: () =>
      parentRule(
        { state: 'held', code: 'SPRING', record: coupon({ use_period: '2026-01-01 ~ 2026-12-31' }), syncedAt: 0 },
        kst(2026, 6, 1),
        SETTINGS,
      ),
    expected: 'pass',
  },
  {
    rule: 'parent',
    name: 'a stopped coupon makes its issued coupon inactive',
    run: () =>
      parentRule(
        { state: 'held', code: 'SPRING', record: coupon({ status: 'stop' }), syncedAt: 0 },
        kst(2026, 6, 1),
        SETTINGS,
      ),
    expected: 'inactive',
    detail: {
      rule: 'parent',
      field: 'status',
      value: 'stop',
      message: 'This issued coupon belongs to coupon "SPRING": This coupon is not active (status "stop").',
    },
  },
  {
    rule: 'parent',
    name: "the coupon's period applies",
    run: () =>
      parentRule(
        { state: 'held', code: 'SPRING', record: coupon({ use_period: '2025-01-01 ~ 2025-12-31' }), syncedAt: 0 },
        kst(2026, 6, 1),
        SETTINGS,
      ),
    expected: 'expired',
    detail: { field: 'use_period' },
  },
  {
    rule: 'parent',
    name: 'a coupon not started yet',
    run: () =>
      parentRule(
        { state: 'held', code: 'SPRING', record: coupon({ use_period: '2027-01-01 ~' }), syncedAt: 0 },
        kst(2026, 6, 1),
        SETTINGS,
      ),
    expected: 'not_started',
  },
  {
    rule: 'parent',
    name: 'a coupon confirmed gone',
    run: () => parentRule({ state: 'gone', code: 'SPRING', since: kst(2026, 5, 31, 9) }, kst(2026, 6, 1), SETTINGS),
    expected: 'inactive',
    detail: {
      field: 'coupon_code',
      value: 'SPRING',
      message:
        'This issued coupon belongs to coupon "SPRING", which the shop no longer has (the shop API confirmed it gone at 2026-05-31 09:00:00).',
    },
  },
  {
    rule: 'parent',
    name: 'a coupon whose newer record could not be read',
    run: () =>
      parentRule(
        { state: 'held', code: 'SPRING', record: coupon(), syncedAt: 0, unreadable: 'status: expected text' },
        kst(2026, 6, 1),
        SETTINGS,
      ),
    expected: 'unreadable',
  },
  {
    rule: 'parent',
    name: 'a coupon whose only record could not be read',
    run: () =>
      parentRule({ state: 'unreadable', code: 'SPRING', message: 'status: expected text' }, kst(2026, 6, 1), SETTINGS),
    expected: 'unreadable',
  },

  // period (Seoul unless said otherwise)
  { rule: 'period', name: "'' means no limit", run: () => period('', kst(2040, 1, 1)), expected: 'pass' },
  {
    rule: 'period',
    name: "'unlimited' means no limit",
    run: () => period('unlimited', kst(2040, 1, 1)),
    expected: 'pass',
  },
  { rule: 'period', name: "'무제한' means no limit", run: () => period('무제한', kst(2040, 1, 1)), expected: 'pass' },
  { rule: 'period', name: 'null means no limit', run: () => period(null, kst(2040, 1, 1)), expected: 'pass' },
  {
    rule: 'period',
    name: 'the last second of the period passes',
    run: () => period('2025-01-01 00:00:00 ~ 2025-12-31 23:59:59', kst(2025, 12, 31, 23, 59, 59) + 999),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'the first second after the period is expired',
    run: () => period('2025-01-01 00:00:00 ~ 2025-12-31 23:59:59', kst(2026, 1, 1)),
    expected: 'expired',
    detail: {
      rule: 'period',
      field: 'use_period',
      message:
        'This coupon expired: it was valid until 2025-12-31 23:59:59 (Asia/Seoul); the order is at 2026-01-01 00:00:00.',
    },
  },
  {
    rule: 'period',
    name: 'the first second of the period passes',
    run: () => period('2025-01-01 00:00:00 ~ 2025-12-31 23:59:59', kst(2025, 1, 1)),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'the second before the start is not started',
    run: () => period('2025-01-01 00:00:00 ~ 2025-12-31 23:59:59', kst(2024, 12, 31, 23, 59, 59)),
    expected: 'not_started',
  },
  {
    rule: 'period',
    name: 'YYYY/MM/DD HH:mm includes the whole last minute',
    run: () => period('2026/03/01 00:00 ~ 2027/05/31 23:59', kst(2027, 5, 31, 23, 59, 59)),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'YYYY/MM/DD HH:mm is expired the minute after',
    run: () => period('2026/03/01 00:00 ~ 2027/05/31 23:59', kst(2027, 6, 1)),
    expected: 'expired',
  },
  {
    rule: 'period',
    name: 'a date-only end includes that whole day',
    run: () => period('2026-01-01 ~ 2026-06-30', kst(2026, 6, 30, 23, 59, 59)),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'a date-only end is expired at the next midnight',
    run: () => period('2026-01-01 ~ 2026-06-30', kst(2026, 7, 1)),
    expected: 'expired',
  },
  {
    rule: 'period',
    name: 'unix seconds: the last second passes',
    run: () => period('1767193200 ~ 1830265199', 1_830_265_199_000),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'unix seconds: the next second is expired',
    run: () => period('1767193200 ~ 1830265199', 1_830_265_200_000),
    expected: 'expired',
  },
  {
    rule: 'period',
    name: 'unix seconds: before the start is not started',
    run: () => period('1767193200 ~ 1830265199', 1_767_193_199_000),
    expected: 'not_started',
  },
  {
    rule: 'period',
    name: 'spaces around ~ are optional',
    run: () => period('2026-01-01~2026-12-31', kst(2026, 6, 1)),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'an empty end side is an open end',
    run: () => period('2026-01-01 00:00:00 ~', kst(2040, 1, 1)),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'an explicit offset wins over the shop zone',
    run: () => period('2026-01-01T00:00:00+09:00 ~ 2026-12-31T23:59:59Z', Date.UTC(2026, 11, 31, 23, 59, 59)),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'a number (one instant, not a range) is unreadable',
    run: () => period(1767193200, kst(2026, 6, 1)),
    expected: 'unreadable',
    detail: { field: 'use_period', value: 1767193200 },
  },
  {
    rule: 'period',
    name: 'free text is unreadable, never accepted',
    run: () => period('until sold out', kst(2026, 6, 1)),
    expected: 'unreadable',
    detail: { value: 'until sold out' },
  },
  {
    rule: 'period',
    name: 'an impossible date is unreadable',
    run: () => period('2026-02-30 ~ 2026-03-31', kst(2026, 3, 5)),
    expected: 'unreadable',
  },
  {
    rule: 'period',
    name: 'an end before the start is unreadable',
    run: () => period('2026-12-31 ~ 2026-01-01', kst(2026, 6, 1)),
    expected: 'unreadable',
  },
  {
    rule: 'period',
    name: 'YYYYMMDD digits are not read as unix seconds',
    run: () => period('20260101 ~ 20261231', kst(2026, 6, 1)),
    expected: 'unreadable',
  },
  // Berlin is 8 hours behind Seoul in winter: 15:00Z is past the Seoul end of 2026-01-31 but inside the Berlin one
  {
    rule: 'period',
    name: 'naive times are in the shop zone (Europe/Berlin passes)',
    run: () => period('2026-01-01 ~ 2026-01-31 23:59:59', Date.UTC(2026, 0, 31, 15), 'Europe/Berlin'),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'naive times are in the shop zone (Asia/Seoul expired)',
    run: () => period('2026-01-01 ~ 2026-01-31 23:59:59', Date.UTC(2026, 0, 31, 15)),
    expected: 'expired',
  },
  {
    rule: 'period',
    name: 'Europe/Berlin: expired the second after 23:59:59 CET',
    run: () => period('2026-01-01 ~ 2026-01-31 23:59:59', Date.UTC(2026, 0, 31, 23), 'Europe/Berlin'),
    expected: 'expired',
  },
  // New York switches to EDT (UTC-4) on 2026-03-08: that day's end is 04:00Z on the 9th, not 05:00Z
  {
    rule: 'period',
    name: 'DST zone: a date-only end on the switch day ends at EDT midnight',
    run: () => period('2026-03-01 ~ 2026-03-08', Date.UTC(2026, 2, 9, 3, 59, 59), 'America/New_York'),
    expected: 'pass',
  },
  {
    rule: 'period',
    name: 'DST zone: one second later is expired',
    run: () => period('2026-03-01 ~ 2026-03-08', Date.UTC(2026, 2, 9, 4), 'America/New_York'),
    expected: 'expired',
  },
  {
    rule: 'period',
    name: 'DST zone: a start in the spring-forward gap reads as 03:30 EDT',
    run: () => period('2026-03-08 02:30 ~ 2026-12-31', Date.UTC(2026, 2, 8, 7, 29, 59), 'America/New_York'),
    expected: 'not_started',
  },
  {
    rule: 'period',
    name: 'DST zone: a repeated 01:30 end means its first occurrence (EDT)',
    run: () => period('2026-10-01 ~ 2026-11-01 01:30:00', Date.UTC(2026, 10, 1, 5, 30, 1), 'America/New_York'),
    expected: 'expired',
  },

  // app
  {
    rule: 'app',
    name: 'an app-only coupon outside the app',
    run: () => appRule(coupon({ use_app: true }), order()),
    expected: 'app_only',
    detail: { rule: 'app', field: 'use_app' },
  },
  {
    rule: 'app',
    name: 'an app-only coupon in the app',
    run: () => appRule(coupon({ use_app: true }), order({ app: true })),
    expected: 'pass',
  },
  {
    rule: 'app',
    name: 'use_app null reads as not app-only',
    run: () => appRule(coupon({ use_app: null }), order()),
    expected: 'pass',
  },

  // combination
  {
    rule: 'combination',
    name: 'is_duplication false with another discount',
    run: () => combinationRule(coupon({ is_duplication: false }), order({ otherDiscount: true })),
    expected: 'not_combinable',
  },
  {
    rule: 'combination',
    name: 'is_duplication true with another discount',
    run: () => combinationRule(coupon({ is_duplication: true }), order({ otherDiscount: true })),
    expected: 'pass',
  },
  {
    rule: 'combination',
    name: 'is_duplication null reads as not combinable',
    run: () => combinationRule(coupon({ is_duplication: null }), order({ otherDiscount: true })),
    expected: 'not_combinable',
  },
  {
    rule: 'combination',
    name: 'is_duplication false without another discount',
    run: () => combinationRule(coupon({ is_duplication: false }), order()),
    expected: 'pass',
  },

  // minimum
  {
    rule: 'minimum',
    name: 'exactly the minimum passes',
    run: () => minimumRule(coupon({ apply_sale_type_minimum_price: 10000 }), { amount: 10000 }),
    expected: 'pass',
  },
  {
    rule: 'minimum',
    name: 'one below the minimum',
    run: () => minimumRule(coupon({ apply_sale_type_minimum_price: 10000 }), { amount: 9999 }),
    expected: 'below_minimum',
    detail: { message: 'Order 9,999 is below the minimum of 10,000 for this coupon.', value: 10000 },
  },
  {
    rule: 'minimum',
    name: 'a zero order with no minimum',
    run: () => minimumRule(coupon({ apply_sale_type_minimum_price: 0 }), { amount: 0 }),
    expected: 'pass',
  },
  {
    rule: 'minimum',
    name: 'a negative minimum is unreadable',
    run: () => minimumRule(coupon({ apply_sale_type_minimum_price: -5 }), { amount: 100 }),
    expected: 'unreadable',
  },

  // discount
  {
    rule: 'discount',
    name: '10% of 32,000',
    run: () => discount({ apply_sale_percent: 10, apply_sale_price: 0 }, 32000),
    expected: 'discount 3200',
  },
  {
    rule: 'discount',
    name: 'percent rounds down (10% of 12,345)',
    run: () => discount({ apply_sale_percent: 10 }, 12345),
    expected: 'discount 1234',
  },
  {
    rule: 'discount',
    name: 'percent rounds down (7% of 999 = 69.93)',
    run: () => discount({ apply_sale_percent: 7 }, 999),
    expected: 'discount 69',
  },
  {
    rule: 'discount',
    name: 'the cap limits a percent discount',
    run: () => discount({ apply_sale_percent: 10, apply_sale_type_max_price: 5000 }, 100000),
    expected: 'discount 5000',
  },
  {
    rule: 'discount',
    name: 'a cap equal to the discount',
    run: () => discount({ apply_sale_percent: 10, apply_sale_type_max_price: 5000 }, 50000),
    expected: 'discount 5000',
  },
  {
    rule: 'discount',
    name: 'a cap of 0 means no cap',
    run: () => discount({ apply_sale_percent: 10, apply_sale_type_max_price: 0 }, 100000),
    expected: 'discount 10000',
  },
  {
    rule: 'discount',
    name: 'percent 100 takes the whole order',
    run: () => discount({ apply_sale_percent: 100 }, 25000),
    expected: 'discount 25000',
  },
  {
    rule: 'discount',
    name: 'percent 100 of the largest safe amount',
    run: () => discount({ apply_sale_percent: 100 }, 9_007_199_254_740_991),
    expected: 'discount 9007199254740991',
  },
  {
    rule: 'discount',
    name: '10% of the largest safe amount is exact',
    run: () => discount({ apply_sale_percent: 10 }, 9_007_199_254_740_991),
    expected: 'discount 900719925474099',
  },
  {
    rule: 'discount',
    name: 'a decimal percent is exact (33.3% of 3,000 = 999, not 998 as in floating point)',
    run: () => discount({ apply_sale_percent: 33.3 }, 3000),
    expected: 'discount 999',
  },
  {
    rule: 'discount',
    name: 'a decimal percent is exact (0.1% of 1,000,000 = 1,000)',
    run: () => discount({ apply_sale_percent: 0.1 }, 1_000_000),
    expected: 'discount 1000',
  },
  {
    rule: 'discount',
    name: 'a decimal percent rounds down exactly (12.5% of 999 = 124.875)',
    run: () => discount({ apply_sale_percent: 12.5 }, 999),
    expected: 'discount 124',
  },
  {
    rule: 'discount',
    name: 'a decimal amount (10% of 1,234.5 = 123.45)',
    run: () => discount({ apply_sale_percent: 10 }, 1234.5),
    expected: 'discount 123',
  },
  {
    rule: 'discount',
    name: 'a tiny percent written with an exponent (1e-7% of 10^15)',
    run: () => discount({ apply_sale_percent: 1e-7 }, 1e15),
    expected: 'discount 1000000',
  },
  {
    rule: 'discount',
    name: 'a fixed amount',
    run: () => discount({ apply_sale_price: 3000, apply_sale_percent: 0 }, 32000),
    expected: 'discount 3000',
  },
  {
    rule: 'discount',
    name: 'a fixed amount larger than the order is limited to it',
    run: () => discount({ apply_sale_price: 3000 }, 2000),
    expected: 'discount 2000',
  },
  {
    rule: 'discount',
    name: 'the cap limits a fixed amount too (5,000 off capped at 3,000)',
    run: () => discount({ apply_sale_price: 5000, apply_sale_type_max_price: 3000 }, 32000),
    expected: 'discount 3000',
  },
  {
    rule: 'discount',
    name: 'a cap above a fixed amount changes nothing',
    run: () => discount({ apply_sale_price: 3000, apply_sale_type_max_price: 5000 }, 32000),
    expected: 'discount 3000',
  },
  {
    rule: 'discount',
    name: 'a fixed amount limited by both the cap and the order',
    run: () => discount({ apply_sale_price: 5000, apply_sale_type_max_price: 3000 }, 2000),
    expected: 'discount 2000',
  },
  {
    rule: 'discount',
    name: 'a zero order gets no fixed discount',
    run: () => discount({ apply_sale_price: 3000 }, 0),
    expected: 'discount 0',
  },
  {
    rule: 'discount',
    name: 'a zero order gets no percent discount',
    run: () => discount({ apply_sale_percent: 10 }, 0),
    expected: 'discount 0',
  },
  {
    rule: 'discount',
    name: 'both filled and a type that names no kind',
    run: () => discount({ apply_sale_percent: 10, apply_sale_price: 3000, type: 'down' }, 32000),
    expected: 'unreadable',
    detail: { field: 'type', value: 'down' },
  },
  {
    rule: 'discount',
    name: 'neither filled',
    run: () => discount({ apply_sale_percent: 0, apply_sale_price: null }, 32000),
    expected: 'unreadable',
  },
  {
    rule: 'discount',
    name: "both filled and type 'percent' decides",
    run: () => discount({ apply_sale_percent: 10, apply_sale_price: 3000, type: 'percent' }, 32000),
    expected: 'discount 3200',
  },
  {
    rule: 'discount',
    name: 'a percent over 100 is unreadable',
    run: () => discount({ apply_sale_percent: 150 }, 32000),
    expected: 'unreadable',
    detail: { field: 'apply_sale_percent', value: 150 },
  },
  {
    rule: 'discount',
    name: 'a negative amount field is unreadable',
    run: () => discount({ apply_sale_price: -3000 }, 32000),
    expected: 'unreadable',
    detail: { field: 'apply_sale_price' },
  },

  // freshness
  {
    rule: 'freshness',
    name: 'local data exactly maxDataAgeMs old is fresh',
    run: () => freshnessRule({ source: 'local', syncedAt: 0, now: DAY, maxDataAgeMs: DAY, discount: 3200 }),
    expected: 'pass',
  },
  {
    rule: 'freshness',
    name: 'local data 1 ms older than maxDataAgeMs is stale',
    run: () => freshnessRule({ source: 'local', syncedAt: 0, now: DAY + 1, maxDataAgeMs: DAY, discount: 3200 }),
    expected: 'stale',
    detail: { discount: 3200, dataAgeMs: DAY + 1 },
  },
  {
    rule: 'freshness',
    name: 'never-confirmed local data is stale',
    run: () => freshnessRule({ source: 'local', syncedAt: null, now: DAY, maxDataAgeMs: DAY, discount: 3200 }),
    expected: 'stale',
    detail: { discount: 3200 },
  },
  {
    rule: 'freshness',
    name: 'a fresh API answer is never stale',
    run: () => freshnessRule({ source: 'network', syncedAt: 0, now: 30 * DAY, maxDataAgeMs: DAY, discount: 3200 }),
    expected: 'pass',
  },
];

describe('coupon rules', () => {
  const titled = cases.map((c) => [`${c.rule}: ${c.name} → ${c.expected}`, c] as const);
  it.each(titled)('%s', (_title, { run, expected, detail, rule }) => {
    const outcome = run();
    expect(summary(outcome)).toBe(expected);
    if (!outcome.pass) {
      expect(outcome.detail.rule).toBe(rule);
      expect(outcome.detail.message.length).toBeGreaterThan(10);
    }
    if (detail) expect(outcome.pass ? {} : outcome.detail).toMatchObject(detail);
  });
});

/** An earlier use of an issued coupon on this till, at 09:00 Seoul on the day of `order()`. */
const EARLIER = {
  journalId: 4,
  journalKey: 'k-4',
  at: kst(2026, 6, 1, 9),
  orderId: 'A-1',
  amount: 30000,
  orderAt: kst(2026, 6, 1, 9),
};

describe('useCountWarning', () => {
  it.each([
    {
      name: 'the use count reached the issued count',
      fields: { type_coupon_create_count: 500, type_coupon_use_count: 500 },
      warns: true,
    },
    {
      name: 'the use count passed it',
      fields: { type_coupon_create_count: 500, type_coupon_use_count: 501 },
      warns: true,
    },
    { name: 'one use left', fields: { type_coupon_create_count: 500, type_coupon_use_count: 499 }, warns: false },
    {
      name: 'an issued count of 0 (no count kept)',
      fields: { type_coupon_create_count: 0, type_coupon_use_count: 3 },
      warns: false,
    },
    { name: 'counts missing', fields: {}, warns: false },
    { name: 'a null count', fields: { type_coupon_create_count: null, type_coupon_use_count: 3 }, warns: false },
  ])('$name: warns $warns', ({ fields, warns }) => {
    expect(useCountWarning(coupon(fields)) !== null).toBe(warns);
  });
});

describe('repeatUseRule', () => {
  it('refuses an issued coupon this till used for another order, naming the earliest such sale', () => {
    const later = { ...EARLIER, journalId: 7, journalKey: 'k-7', at: kst(2026, 6, 1, 11), orderId: 'A-3' };
    const outcome = repeatUseRule('issued', [later, EARLIER], order({ orderId: 'A-2' }), 3200, SEOUL);
    expect(outcome).toMatchObject({
      pass: false,
      reason: 'used_on_this_till',
      detail: { rule: 'use', discount: 3200, earlierUse: EARLIER },
    });
    expect(outcome.pass ? '' : outcome.detail.message).toBe(
      'This till already accepted this issued coupon at 2026-06-01 09:00:00 (Asia/Seoul) (order A-1, 30,000, journal entry 4), and the shop API does not show that use yet. Ask a manager to check order A-1 on this till: a sale voided here gives the voucher back.',
    );
  });

  it('lets the same order be checked again, and counts every use for an order without a reference', () => {
    expect(repeatUseRule('issued', [EARLIER], order({ orderId: 'A-1' }), 3200, SEOUL).pass).toBe(true);
    expect(repeatUseRule('issued', [EARLIER], order(), 3200, SEOUL).pass).toBe(false);
    expect(repeatUseRule('issued', [{ ...EARLIER, orderId: null }], order({ orderId: 'A-1' }), 3200, SEOUL).pass).toBe(
      false,
    );
  });

  it('passes a plain coupon and an issued coupon this till never used', () => {
    expect(repeatUseRule('coupon', [EARLIER], order(), 3200, SEOUL).pass).toBe(true);
    expect(repeatUseRule('issued', [], order(), 3200, SEOUL).pass).toBe(true);
  });

  it('names the override on the verdict when the host accepts the repeat use', () => {
    const settings = { policy: DEFAULT_COUPON_POLICY, timeZone: SEOUL, now: kst(2026, 6, 1, 12), maxDataAgeMs: DAY };
    const found: FoundCoupon = {
      kind: 'issued',
      record: issued({ apply_sale_price: 3000 }),
      syncedAt: settings.now,
      source: 'network',
      uses: [EARLIER],
    };
    expect(decideCoupon(found, order({ orderId: 'A-2', acceptRepeatUse: true }), settings)).toMatchObject({
      ok: true,
      discount: 3000,
      overrides: ['repeat_use'],
    });
    expect(decideCoupon(found, order({ orderId: 'A-2' }), settings)).toMatchObject({
      ok: false,
      reason: 'used_on_this_till',
      detail: { discount: 3000 },
    });
  });
});

describe('otherTillUseRule', () => {
  const OTHER = { till: 'front-1', device: 'd1', at: kst(2026, 6, 1, 9), orderId: 'A-1' };

  it('refuses an issued coupon another till used for another order, naming the earliest such use', () => {
    const later = { ...OTHER, till: 'front-3', at: kst(2026, 6, 1, 11), orderId: 'C-1' };
    const outcome = otherTillUseRule('issued', [later, OTHER], 3200, SEOUL);
    expect(outcome).toMatchObject({
      pass: false,
      reason: 'used_on_another_till',
      detail: { rule: 'use', discount: 3200, otherUse: OTHER },
    });
    expect(outcome.pass ? '' : outcome.detail.message).toBe(
      'Till front-1 accepted this issued coupon at 2026-06-01 09:00:00 (Asia/Seoul) (order A-1), and the shop API does not show that use yet. Ask a manager to check order A-1 at till front-1: a sale voided there gives the voucher back.',
    );
  });

  it("counts another till's order of the same id as another sale (each till numbers its own), and passes a plain coupon and a code no other till used", () => {
    expect(otherTillUseRule('issued', [OTHER], 3200, SEOUL).pass).toBe(false);
    expect(otherTillUseRule('coupon', [OTHER], 3200, SEOUL).pass).toBe(true);
    expect(otherTillUseRule('issued', [], 3200, SEOUL).pass).toBe(true);
    // a sale without an order reference is named by its time
    const outcome = otherTillUseRule('issued', [{ ...OTHER, orderId: null }], 3200, SEOUL);
    expect(outcome.pass ? '' : outcome.detail.message).toContain(
      'Ask a manager to check the sale of 2026-06-01 09:00:00 at till front-1',
    );
  });

  it("comes after this till's own earlier use, and acceptRepeatUse lets both through with one override", () => {
    const settings = { policy: DEFAULT_COUPON_POLICY, timeZone: SEOUL, now: kst(2026, 6, 1, 12), maxDataAgeMs: DAY };
    const found: FoundCoupon = {
      kind: 'issued',
      record: issued({ apply_sale_price: 3000 }),
      syncedAt: settings.now,
      source: 'network',
      uses: [EARLIER],
      otherUses: [OTHER],
    };
    expect(decideCoupon(found, order({ orderId: 'B-1' }), settings)).toMatchObject({
      ok: false,
      reason: 'used_on_this_till',
    });
    expect(decideCoupon({ ...found, uses: [] }, order({ orderId: 'B-1' }), settings)).toMatchObject({
      ok: false,
      reason: 'used_on_another_till',
      detail: { discount: 3000 },
    });
    expect(decideCoupon(found, order({ orderId: 'B-1', acceptRepeatUse: true }), settings)).toMatchObject({
      ok: true,
      discount: 3000,
      overrides: ['repeat_use'],
    });
  });
});

describe('rule order (decideCoupon)', () => {
  const settings = { policy: DEFAULT_COUPON_POLICY, timeZone: SEOUL, now: kst(2026, 6, 1, 12), maxDataAgeMs: DAY };
  const found = (record: Coupon | IssuedCoupon, extra: Partial<FoundCoupon> = {}): FoundCoupon => ({
    kind: 'coupon',
    record,
    syncedAt: settings.now - HOUR,
    source: 'local',
    ...extra,
  });
  const welcome = coupon({
    apply_sale_percent: 10,
    apply_sale_type_max_price: 5000,
    apply_sale_type_minimum_price: 10000,
    use_period: '',
  });

  it.each([
    {
      name: 'status before period',
      record: coupon({ status: 'stop', use_period: '2025-01-01 ~ 2025-12-31' }),
      o: order(),
      expected: 'inactive/status',
    },
    {
      name: 'period before app',
      record: coupon({ use_app: true, use_period: '2025-01-01 ~ 2025-12-31', apply_sale_price: 1 }),
      o: order(),
      expected: 'expired/period',
    },
    {
      name: "an issued coupon's own period before its coupon",
      record: issued({ use_period: '2025-01-01 ~ 2025-12-31', apply_sale_price: 1 }),
      kind: 'issued' as const,
      parent: { state: 'held' as const, code: 'T', record: coupon({ status: 'stop' }), syncedAt: 0 },
      o: order(),
      expected: 'expired/period',
    },
    {
      name: 'its coupon before app',
      record: issued({ use_app: true, apply_sale_price: 1 }),
      kind: 'issued' as const,
      parent: { state: 'held' as const, code: 'T', record: coupon({ status: 'stop' }), syncedAt: 0 },
      o: order(),
      expected: 'inactive/parent',
    },
    {
      name: 'app before combination',
      record: coupon({ use_app: true, is_duplication: false, apply_sale_price: 1 }),
      o: order({ otherDiscount: true }),
      expected: 'app_only/app',
    },
    {
      name: 'combination before minimum',
      record: coupon({ is_duplication: false, apply_sale_type_minimum_price: 50000, apply_sale_price: 1 }),
      o: order({ otherDiscount: true }),
      expected: 'not_combinable/combination',
    },
    {
      name: 'minimum before discount',
      record: coupon({ apply_sale_type_minimum_price: 50000, apply_sale_price: -1 }),
      o: order(),
      expected: 'below_minimum/minimum',
    },
    {
      name: 'discount before freshness',
      record: coupon({ apply_sale_percent: 0, apply_sale_price: 0 }),
      o: order(),
      expected: 'unreadable/discount',
    },
    {
      name: 'discount before use',
      record: issued({ apply_sale_percent: 0, apply_sale_price: 0 }),
      kind: 'issued' as const,
      uses: [EARLIER],
      o: order(),
      expected: 'unreadable/discount',
    },
    {
      name: 'use before freshness',
      record: issued({ apply_sale_price: 1000 }),
      kind: 'issued' as const,
      uses: [EARLIER],
      o: order(),
      expected: 'used_on_this_till/use',
    },
    {
      name: "another till's use before freshness",
      record: issued({ apply_sale_price: 1000 }),
      kind: 'issued' as const,
      otherUses: [{ till: 'front-1', device: 'd1', at: 0, orderId: null }],
      o: order(),
      expected: 'used_on_another_till/use',
    },
    {
      name: 'freshness after an overridden use',
      record: issued({ apply_sale_price: 1000 }),
      kind: 'issued' as const,
      uses: [EARLIER],
      o: order({ acceptRepeatUse: true }),
      expected: 'stale/freshness',
    },
  ])('$name', ({ record, o, expected, ...extra }) => {
    const v = decideCoupon(found(record, { syncedAt: null, ...extra }), o, settings);
    expect(v.ok ? 'ok' : `${v.reason}/${v.detail.rule}`).toBe(expected);
  });

  it('gives the discount with the coupon, its kind, syncedAt and source when every rule passes', () => {
    const v = decideCoupon(found(welcome), order({ amount: 32000 }), settings);
    expect(v).toMatchObject({
      ok: true,
      discount: 3200,
      kind: 'coupon',
      syncedAt: settings.now - HOUR,
      source: 'local',
    });
    expect(v.detail).toMatchObject({ rule: 'discount', dataAgeMs: HOUR });
  });

  it('holds back a yes on old local data as stale, with the discount it would give', () => {
    const v = decideCoupon(found(welcome, { syncedAt: settings.now - 2 * DAY }), order({ amount: 100000 }), settings);
    expect(v).toMatchObject({
      ok: false,
      reason: 'stale',
      detail: { rule: 'freshness', discount: 5000, dataAgeMs: 2 * DAY },
    });
    expect(v.ok ? '' : v.detail.message).toContain('2 days');
  });

  it('lets a yes on old local data through with acceptStale, and names the override', () => {
    const v = decideCoupon(
      found(welcome, { syncedAt: settings.now - 2 * DAY }),
      order({ amount: 100000, acceptStale: true }),
      settings,
    );
    expect(v).toMatchObject({ ok: true, discount: 5000, overrides: ['stale'] });
    const fresh = decideCoupon(found(welcome), order({ amount: 100000, acceptStale: true }), settings);
    expect(fresh.ok && fresh.overrides).toBe(undefined); // fresh data needed no override
  });

  it('keeps a rejection on old local data as the rejection, not stale', () => {
    const v = decideCoupon(found(welcome, { syncedAt: settings.now - 2 * DAY }), order({ amount: 9000 }), settings);
    expect(v).toMatchObject({
      ok: false,
      reason: 'below_minimum',
      detail: { message: 'Order 9,000 is below the minimum of 10,000 for this coupon.' },
    });
  });
});

describe('couponPolicy', () => {
  it('merges host lists over the default and moves a status out of the default lists', () => {
    expect(resolvePolicy({ active: ['Progress', 'ready'] })).toEqual({
      active: ['progress', 'ready'],
      inactive: ['stop', 'end'],
      used: ['complete'],
    });
    expect(resolvePolicy(undefined)).toEqual(DEFAULT_COUPON_POLICY);
  });

  it('refuses a list that is not an array of strings', () => {
    expect(() => resolvePolicy({ active: 'progress' as unknown as string[] })).toThrow(
      expect.objectContaining({ code: 'bad_options' }),
    );
  });
});

describe('readOrder', () => {
  it.each([
    { name: 'NaN', amount: Number.NaN },
    { name: 'a negative amount', amount: -1 },
    { name: 'Infinity', amount: Number.POSITIVE_INFINITY },
    { name: 'a string', amount: '32000' as unknown as number },
    { name: 'missing', amount: undefined as unknown as number },
  ])('throws bad_request for $name as the amount', ({ amount }) => {
    expect(() => readOrder('WELCOME10', { amount }, 0)).toThrow(
      expect.objectContaining({ code: 'bad_request', message: expect.stringContaining('order.amount') }),
    );
  });

  it.each([
    { name: 'an empty string', orderId: '' },
    { name: 'blanks', orderId: '   ' },
    { name: 'a number', orderId: 42 },
    { name: 'over 200 characters', orderId: 'x'.repeat(201) },
  ])('throws bad_request for $name as the orderId', ({ orderId }) => {
    expect(() => readOrder('A', { amount: 1, orderId: orderId as string }, 0)).toThrow(
      expect.objectContaining({ code: 'bad_request', message: expect.stringContaining('order.orderId') }),
    );
  });

  it('keeps the orderId as given', () => {
    expect(readOrder('A', { amount: 1, orderId: 'POS1-0042' }, 0).orderId).toBe('POS1-0042');
    expect(readOrder('A', { amount: 1, orderId: 'x'.repeat(200) }, 0).orderId).toHaveLength(200);
  });

  it('throws bad_request for an empty code and an invalid date', () => {
    expect(() => readOrder('', { amount: 1 }, 0)).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => readOrder('..', { amount: 1 }, 0)).toThrow(
      expect.objectContaining({ code: 'bad_request', message: expect.stringContaining('"." or ".."') }),
    );
    expect(() => readOrder('A', { amount: 1, at: new Date('nope') }, 0)).toThrow(
      expect.objectContaining({ code: 'bad_request' }),
    );
  });

  it('defaults the time to now and reads a Date', () => {
    expect(readOrder('A', { amount: 0 }, 1234)).toEqual({
      amount: 0,
      orderId: null,
      at: 1234,
      app: false,
      otherDiscount: false,
      acceptStale: false,
      acceptRepeatUse: false,
    });
    expect(readOrder('A', { amount: 5, at: new Date(99), app: true }, 1234)).toMatchObject({ at: 99, app: true });
  });
});
