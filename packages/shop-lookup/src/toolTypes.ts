// Types of the app tools: refreshing one lookup, the journal's export, and the engine's inspection (the devtools).
import type { JournalEntry, LookupError, UseClaim } from './types';

/**
 * What `refresh()` asks the API (or the relay) for again: one coupon, one issued coupon, one product's options, or
 * one option of a product (by number or by code, as the lookups name them).
 * @example lookup.refresh({ coupon: 'WELCOME10' }); lookup.refresh({ productNo: 13805, optionCode: 'SIZE' });
 */
export type RefreshTarget =
  | { coupon: string }
  | { issuedCoupon: string }
  | { productNo: number; optionNo?: number | undefined; optionCode?: string | undefined };

/**
 * The outcome of `refresh()`. Never thrown for API trouble or for being offline: it says so.
 * @example const r = await lookup.refresh({ coupon: code }); if (r.offline) note('offline: shown as last synced');
 */
export interface RefreshReport {
  /** The API (or relay) answered: the local data, and every open lookup of it, is its answer now. */
  ok: boolean;
  /** Not asked, or not answered: the till is offline. The lookups keep answering from local data. */
  offline: boolean;
  /** Why not `ok` (`network_error` offline, `forbidden`, `rate_limited`, ...: docs/errors.md); null when ok. */
  error: LookupError | null;
}

/**
 * Options of `exportJournal()`. @example await lookup.exportJournal({ format: 'csv', since: Date.now() - 86_400_000 })
 */
export interface JournalExport {
  /** `'csv'`: a spreadsheet (UTF-8 with a byte-order mark, CRLF lines); `'json'`: an array of the same rows. */
  format: 'csv' | 'json';
  /** Only verdicts given at or after this time (epoch ms or a Date); default: every entry the journal holds. */
  since?: number | Date | undefined;
  /** What the `till` column says; default this database's device id (the till as the relay knows it without a token). */
  till?: string | undefined;
}

/**
 * One row of the journal's export (`format: 'json'`; the CSV has the same columns, in this order). Times are the
 * shop's wall-clock time (`timeZone`, default Asia/Seoul) as `YYYY-MM-DD HH:mm:ss`.
 * @example { time: '2026-06-01 14:03:12', till: 'front-1', order: 'A-1017', code: 'WELCOME10', amount: 32000,
 * discount: 3200, reason: null, source: 'local', overrides: [], shared: null, conflict: null, action: 'verdict',
 * claim: null, released: null }
 */
export interface JournalRow {
  /** When the verdict was given. */
  time: string;
  till: string;
  /** The order's `orderId`; null when none was given. */
  order: string | null;
  code: string;
  amount: number;
  /** The discount of an accepted coupon; null when refused. */
  discount: number | null;
  /** Why it was refused (`CouponRejection`); null when accepted. */
  reason: string | null;
  /** `local` (decided from this till's data) or `network` (the API's answer). */
  source: 'local' | 'network';
  /** The overrides that let it through (`stale`, `repeat_use`). */
  overrides: string[];
  /** When the relay acknowledged this use (an accepted issued coupon on a relay); null: not shared. */
  shared: string | null;
  /** The other till's use this one conflicts with: `till-2 2026-06-01 14:05:40 order A-0999`; null when none. */
  conflict: string | null;
  /** `verdict`, or `release`: a voided sale's voucher given back (`releaseCoupon`), no sale of its own. */
  action: 'verdict' | 'release';
  /** What the relay's claim said (`granted`, `refused`, `timeout`, `failed`); null when none was made. */
  claim: UseClaim | null;
  /** When this till gave the use back (`releaseCoupon`); null when it did not. */
  released: string | null;
}

/** One resource the engine keeps synced (the coupon list, a tracked product's options), as `inspect()` shows it. */
export interface InspectedResource {
  /** `coupons` or `options:<productNo>`. */
  key: string;
  /** When the API (or relay) last confirmed it, epoch ms; null: never. */
  syncedAt: number | null;
  /** A refresh of it is under way. */
  fetching: boolean;
  /** Its last refresh failure while its data may be out of date because of it; null: none. */
  error: LookupError | null;
}

/** Options of `inspect()`. @example await lookup.inspect({ records: false }) */
export interface InspectOptions {
  /**
   * Count the records (default true). Counting reads every row of a table (100,000 coupons on a large till): a
   * frequent poll leaves it out and counts after a sync.
   */
  records?: boolean | undefined;
}

/**
 * What the engine holds and does now, for the devtools (`shop-lookup/devtools`) and support: read from the engine's
 * memory and a few IndexedDB counts, no network.
 * @example const i = await lookup.inspect(); console.table(i.resources);
 */
export interface LookupInspection {
  /** The options the engine runs with that say where its data comes from. */
  baseUrl: string;
  shopId: string | null;
  dbName: string;
  coupons: 'all' | 'byCode';
  /** Records in IndexedDB; null when asked without them (`{ records: false }`). */
  records: { coupons: number; issuedCoupons: number; options: number } | null;
  /** Product numbers whose options are kept synced (shop-wide). */
  trackedProducts: number[];
  resources: InspectedResource[];
  /** Uses of issued coupons waiting to be sent to the relay (the outbox). */
  unsentUses: number;
  /** The offline journal: how many entries it holds, and the newest (newest first, at most 50). */
  journal: { count: number; latest: JournalEntry[] };
}
