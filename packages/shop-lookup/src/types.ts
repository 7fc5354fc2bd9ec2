// Public types of shop-lookup. Types only: both the host side (src/) and the engine (worker/) import them.
import type { Coupon, IssuedCoupon, LookupError, RateLimits, ShopAuth } from '@shop-lookup/shop-api';
import type { Endpoint } from 'comlink';

// the shop API's data, errors, rate limits and credentials are the shop API client's (packages/shop-api)
export type {
  Coupon,
  IssuedCoupon,
  LookupError,
  LookupErrorCode,
  OptionValue,
  ProductOption,
  RateLimits,
  RecordIssue,
  ServerErrorCode,
  ShopAuth,
} from '@shop-lookup/shop-api';

/**
 * What every lookup emits.
 * @example
 * lookup.coupon('WELCOME10').subscribe(({ data, syncedAt, offline }) => render(data, syncedAt, offline));
 */
export interface LookupResult<T> {
  /** Single lookups: null = not found (or not known locally); lists: [] when none. */
  data: T;
  /** Epoch ms when the API last confirmed this data; null = never confirmed. */
  syncedAt: number | null;
  /** A network refresh of this data is under way. */
  fetching: boolean;
  /** The API is unreachable right now (no network, or it keeps failing). */
  offline: boolean;
  /** The last refresh failure for this data, while the data may be out of date because of it. */
  error: LookupError | null;
}

/**
 * Sync state of the engine, as `status()` emits it.
 * @example lookup.status().subscribe((s) => (badge.textContent = s.online ? s.phase : 'offline'));
 */
export interface SyncStatus {
  online: boolean;
  /** `waiting`: held back by a rate limit or a backoff. */
  phase: 'idle' | 'syncing' | 'waiting' | 'offline' | 'error';
  progress: { resource: string; done: number; total: number | null } | null;
  lastSyncedAt: { coupons: number | null; options: number | null };
  lastError: LookupError | null;
  /** Whether this engine runs background syncs (false: another tab/screen does, this one serves lookups). */
  leader?: boolean;
  /** Answer of `navigator.storage.persist()` (undefined where the platform has no such API). */
  persisted?: boolean;
  /**
   * Where the data comes from: `'relay'` (a shop-lookup relay's feed) or `'direct'` (the API listed page by
   * page). Absent until the first sync found out. @example if (s.source === 'relay') bar.textContent = `via relay,
   * version ${s.relayVersion}`;
   */
  source?: 'relay' | 'direct';
  /** The relay feed version the local data is at (with `source: 'relay'`); null before the first snapshot. */
  relayVersion?: number | null;
  /**
   * With `source: 'relay'`: the relay's own state, as its last answer told it (absent until the relay answered).
   * `degraded`: it serves its last snapshot without its store or without the shop API (its last listing failed), so
   * the data ages although the relay answers; `error` says why (null when it did not say). `listedAt`: when the
   * relay's last complete listing of the coupons started (epoch ms): the newest data it can give.
   * @example if (s.relay?.degraded) warn(`Relay: ${s.relay.error ?? 'degraded'};
   * coupons as of ${new Date(s.relay.listedAt ?? 0).toLocaleString()}`);
   */
  relay?: { degraded: boolean; error: string | null; listedAt: number | null };
  /**
   * With phase `waiting`: when the pause ends, epoch ms (a backoff, or the API's `Retry-After`, of which at most
   * 10 minutes is honoured). @example if (s.waitingUntil) note(`sync resumes at ${new
   * Date(s.waitingUntil).toLocaleTimeString()}`);
   */
  waitingUntil?: number;
  /**
   * How far this till's clock is off the shop API's (or the relay's) clock, ms, read from the `Date` header of
   * their answers: positive when the till is ahead. Present only when it is off by more than a minute; coupon
   * periods and data ages are judged by the corrected time meanwhile. After a restart, the offset kept from before
   * until an answer tells it again.
   * @example if (s.clockOffsetMs) warn(`The till's clock is off by ${Math.round(s.clockOffsetMs / 60000)} minutes.`);
   */
  clockOffsetMs?: number;
  /** Present while local storage has a problem: what it is, and what it costs (see StorageProblem). */
  storage?: StorageProblem;
  /**
   * What the shop's server (its relay or proxy) refused this engine (`forbidden`, one error per refused part, such as
   * the coupon list): those parts are skipped by the background syncs, not asked again, until the engine restarts or
   * the host calls `sync()`. Absent when nothing was refused.
   * @example if (s.refused) note(s.refused.map((e) => e.message).join(' '));
   */
  refused?: LookupError[];
  /**
   * This till's uses of issued coupons that another till also used (the relay found them when the tills came back:
   * docs/checkout.md, "Uses shared between tills"): how many journal entries carry a `conflict`, and the newest of
   * them (by the other use's time). Absent when none does.
   * @example if (s.useConflicts) warn(`${s.useConflicts.count} vouchers used twice;
   * last: ${s.useConflicts.newest.code} at ${s.useConflicts.newest.conflict.till}`);
   */
  useConflicts?: { count: number; newest: UseConflictEntry };
}

/** A journal entry with a conflict, as `status().useConflicts` names it. */
export interface UseConflictEntry {
  journalId: number;
  journalKey: string;
  code: string;
  orderId: string | null;
  /** When this till accepted it, ms. */
  at: number;
  conflict: UseConflict;
}

/**
 * The other use of an issued coupon that one of this till's uses conflicts with: the earlier sale when this one
 * came later, else the first later one (journal entry `conflict`).
 * @example if (e.conflict) note(`also used at ${e.conflict.till}, ${new Date(e.conflict.at).toLocaleString()}, order
 * ${e.conflict.orderId ?? '?'}`);
 */
export interface UseConflict {
  /** The other till: its name on the relay (its till token's), else its device id. */
  till: string;
  /** When that till accepted it, ms. */
  at: number;
  /** That sale's `orderId` (null when it had none). */
  orderId: string | null;
  /**
   * Which sale keeps the voucher, by the relay's order (the tills' own times bounded by what the relay can trust:
   * docs/checkout.md, "Conflicts"): true when that other sale is the first (this entry's sale is the one to recover),
   * false when this entry's sale is. Absent on marks made by a release before this field.
   */
  first?: boolean;
}

/**
 * Another till's use of an issued coupon, as the relay's feed told this till (`used_on_another_till`).
 * @example showToCashier(`Used at ${u.till} on ${new Date(u.at).toLocaleString()}`);
 */
export interface OtherTillUse {
  /** The till: its name on the relay (its till token's), else its device id. */
  till: string;
  /** Its device id (one database of shop-lookup). */
  device: string;
  /** When it accepted the coupon, ms. */
  at: number;
  /** Its `orderId` (null when it had none). */
  orderId: string | null;
}

/**
 * A problem with local storage, as `status().storage` shows it while it lasts.
 * @example if (s.storage?.memoryOnly) banner('This browser keeps nothing for offline use: ' + s.storage.error.message);
 */
export interface StorageProblem {
  /** What is wrong: `quota_exceeded`, `storage_unavailable`, `storage_upgraded`, ... (docs/errors.md). */
  error: LookupError;
  /**
   * true: there is no usable IndexedDB, so data is kept in memory only: the engine answers online, nothing survives a
   * reload.
   */
  memoryOnly: boolean;
  /**
   * Offline-journal entries kept in memory because storage refused them; written once it accepts writes again (lost
   * on reload).
   */
  unsavedJournal: number;
}

/**
 * The outcome of `sync()` / `prefetchIssuedCoupons()`. Never thrown: a failed sync resolves with `ok: false`.
 * @example const r = await lookup.sync(); if (!r.ok) console.warn(r.errors.map((e) => e.message).join('; '));
 */
export interface SyncReport {
  ok: boolean;
  /** Records received from the API. */
  fetched: number;
  /** Records written to IndexedDB (unchanged records are not rewritten). */
  written: number;
  deleted: number;
  /** Records that failed validation: reported, kept out of the lookups, never replacing a good copy. */
  rejected: number;
  requests: number;
  errors: LookupError[];
  /**
   * Parts of the sync not run because the shop's server refused them earlier since the engine started (`forbidden`,
   * with the reason); a sync whose only trouble is skipped parts is `ok`. Absent when nothing was skipped.
   */
  skipped?: LookupError[];
}

/**
 * Options of `createShopLookup`. Only `baseUrl` is required; docs/configuration.md has the full table.
 * @example const options: ShopLookupOptions = { baseUrl: '/shop-api', products: [13805], dbName:
 * 'shop-lookup:my-shop' };
 */
export interface ShopLookupOptions {
  /** The API origin (`https://api.imweb.me`) or a same-origin proxy path such as `'/shop-api'`. */
  baseUrl: string;
  /**
   * `{ key, secret }`: a token is fetched from /v2/auth and renewed when it expires (keep these out of browser
   * bundles: use a proxy there). `{ accessToken }`: a token the host already has. Omitted: no token is sent.
   */
  auth?: ShopAuth | undefined;
  /**
   * The till's credential for the shop's relay (or proxy), sent as `Authorization: Bearer <token>` with every
   * request, by the worker and by every tab's engine alike. A function is asked when the first request goes out and
   * asked again once when the relay answers 401 (a till signed in again gets its new token); a wrong token shows as
   * `forbidden`, never as offline. Kept in memory only: never stored in IndexedDB, never logged. A function that
   * throws or gives no token sends the request without one (the relay's 401 says what it wants).
   * @example createShopLookup({ baseUrl: 'https://relay.example', token: () => session.tillToken() })
   */
  token?: string | (() => string | Promise<string>) | undefined;
  /**
   * Product numbers whose options are kept synced, added to the shop-wide set every tab's syncs list (kept in
   * IndexedDB).
   * @example products: [13801, 13805]
   */
  products?: number[] | undefined;
  /** Background refresh period while online, ms. Default 300_000 (5 minutes). */
  refreshIntervalMs?: number | undefined;
  /**
   * Where the data comes from. `'auto'` (default): the engine asks `GET {baseUrl}/relay/v1` once; a shop-lookup
   * relay there is synced through its feed (a snapshot, then only changes, live while online), anything else is
   * listed page by page. With `auth` the engine talks to the API itself: `'auto'` is `'direct'` and nothing is
   * asked (the API has no such path). `'direct'` / `'relay'` skip the question.
   * @example createShopLookup({ baseUrl: '/shop-api', source: 'relay' })
   */
  source?: 'auto' | 'direct' | 'relay' | undefined;
  /**
   * Which coupons this engine keeps. `'all'` (default, a till): the whole coupon list is synced. `'byCode'` (a
   * storefront): the list is never asked for; `coupon(code)`, `issuedCoupon(code)` and `validateCoupon` read one
   * coupon through by its exact code and keep it for offline use; `coupons()` emits only the coupons this device read
   * that way, with `syncedAt: null` (the shop's list is never confirmed); tracked products' options sync as usual.
   * @example createShopLookup({ baseUrl: '/shop-api', products: [13805], coupons: 'byCode' })
   */
  coupons?: 'all' | 'byCode' | undefined;
  /**
   * Which shop this is, in your own terms (the Imweb site code, your tenant id). The local database is claimed for
   * it and refuses every other shop's data, whatever the auth mode: set it whenever the base URL alone does not
   * tell shops apart (behind a proxy, with `accessToken`, several shops on one origin). It also names the default
   * database. @example shopId: 'S2024abcd'
   */
  shopId?: string | undefined;
  /** IndexedDB database name; one per shop. Default `'shop-lookup:<shopId>'` with `shopId`, else 'shop-lookup'. */
  dbName?: string | undefined;
  /**
   * Default true where `Worker` exists. false: run the same engine in this thread (Node, SSR, tests).
   * A function: create the worker yourself (bundlers that do not understand `new URL(..., import.meta.url)`),
   * e.g. `worker: () => new Worker(new URL('shop-lookup/worker', import.meta.url), { type: 'module' })`.
   */
  worker?: boolean | (() => EngineEndpoint) | undefined;
  /**
   * IndexedDB factory for `worker: false` in Node, e.g. fake-indexeddb's. Where there is none that can be used, the
   * engine keeps its data in memory (`status().storage`). @example { indexedDB: new IDBFactory(), IDBKeyRange }
   */
  indexedDB?: IDBFactory | undefined;
  /** Goes with `indexedDB` (fake-indexeddb exports both). Default: the global `IDBKeyRange`. */
  IDBKeyRange?: typeof IDBKeyRange | undefined;
  /**
   * Ask the browser to keep this site's storage under pressure (`navigator.storage.persist()`), so offline data
   * is not evicted; the answer shows in `status().persisted`. Default true (only a window can ask).
   */
  persist?: boolean | undefined;
  /** Custom fetch (`worker: false` only: functions cannot cross into a worker). Default globalThis.fetch. */
  fetch?: typeof fetch | undefined;
  /**
   * Client-side rate limits, requests per second. Default `{ list: 1, other: 5 }` (the API's documented limits);
   * false = none.
   */
  rateLimits?: RateLimits | false | undefined;
  /** Per-request timeout, ms. Default 15_000. */
  requestTimeoutMs?: number | undefined;
  /** Page size of list calls. Default 100 (the API's maximum). */
  pageSize?: number | undefined;
  /**
   * Retries of background sync work (5xx, -19, -999, throttling, timeouts, dropped connections): exponential
   * backoff with jitter. A request that got no answer at all (refused, dropped, timed out) is retried only
   * `unansweredRetries` times; then the engine probes the API every 2 s … 60 s until it answers.
   * Default `{ retries: 5, unansweredRetries: 2, baseDelayMs: 1000, maxDelayMs: 30_000 }`.
   */
  retry?: { retries?: number; unansweredRetries?: number; baseDelayMs?: number; maxDelayMs?: number } | undefined;
  /** How coupon statuses are read by `validateCoupon`; merged over the documented default. */
  couponPolicy?: Partial<CouponPolicy> | undefined;
  /** Time zone of naive dates in coupon periods (`2026-05-01 10:00`). Default 'Asia/Seoul'. */
  timeZone?: string | undefined;
  /**
   * Local data older than this (by the API's clock) gives `stale` verdicts offline (unless the order accepts stale
   * data). Default 24 h.
   */
  maxDataAgeMs?: number | undefined;
  /**
   * On a relay that takes this till's uses: how long an online `validateCoupon` of an issued coupon waits for the
   * relay's claim (the relay records the use only if it is the voucher's first, so two tills never both say yes);
   * past it the verdict is decided by this till's own rules and says so (`claim: 'timeout'`), and the use is sent as
   * any other. Default 1_500 ms.
   * @example { claimTimeoutMs: 3_000 }
   */
  claimTimeoutMs?: number | undefined;
}

/**
 * Anything Comlink can talk to: a Worker, a MessagePort, a SharedWorker's port. What a `worker` function returns.
 * @example worker: (): EngineEndpoint => new Worker(new URL('shop-lookup/worker', import.meta.url), { type: 'module' })
 */
export type EngineEndpoint = Endpoint;

/**
 * The order a coupon is checked against.
 * @example { amount: 32000, orderId: 'A-1017', app: false, otherDiscount: false }
 */
export interface CouponOrder {
  /** Order amount the discount applies to (same unit as the coupon amounts, e.g. KRW). */
  amount: number;
  /**
   * Your reference of this order (a non-empty string of at most 200 characters), kept in the journal entry so a
   * verdict can be matched to its sale when reconciling. @example { amount: 32000, orderId: 'POS1-20260601-0042' }
   */
  orderId?: string | undefined;
  /** When the order happens; default now. */
  at?: number | Date | undefined;
  /** The order comes from the shop's app. */
  app?: boolean | undefined;
  /** Another discount is already applied. */
  otherDiscount?: boolean | undefined;
  /**
   * Decide from local data even if it is older than `maxDataAgeMs` (default false: such a verdict is `stale`). When it
   * turns a `stale` into a "yes", the verdict and its journal entry say so (`overrides: ['stale']`).
   */
  acceptStale?: boolean | undefined;
  /**
   * Accept an issued coupon again although this till (`used_on_this_till`) or another till of the shop
   * (`used_on_another_till`, heard through the relay) already accepted it for another order and the API does not
   * show that use yet (default false: such a verdict is refused). The verdict and its journal entry say so
   * (`overrides: ['repeat_use']`), and the use is shared like any other. The same `orderId` checked again on the same
   * till is never a second use (another till's order of the same id is: each till numbers its own). A voided sale
   * is better released (`releaseCoupon`): that gives the voucher back to every till.
   */
  acceptRepeatUse?: boolean | undefined;
}

/**
 * An override the host passed that turned a refusal into a "yes": `'stale'` (`acceptStale`), `'repeat_use'`
 * (`acceptRepeatUse`: over `used_on_this_till` or `used_on_another_till`). Named on the verdict (`overrides`) and in
 * its journal entry.
 * @example if (v.ok && v.overrides?.includes('stale')) noteManagerApproval();
 */
export type CouponOverride = 'stale' | 'repeat_use';

/**
 * An earlier sale that used this issued coupon, which the API does not show yet (`used_on_this_till`).
 * @example showToCashier(`Used at ${new Date(v.detail.earlierUse!.at).toLocaleString()} for order
 * ${v.detail.earlierUse!.orderId ?? '?'}`);
 */
export interface EarlierUse {
  /** The `id` of its journal entry (it may have been cleared from the journal since), and its `key`. */
  journalId: number | null;
  journalKey: string;
  /** When it was accepted, ms. */
  at: number;
  /** Its order: your `orderId` (null when none was given), amount and time. */
  orderId: string | null;
  amount: number;
  orderAt: number;
}

/**
 * Why a coupon does not apply. `unreadable`: a field needed for the decision could not be read (rule `record`: the
 * newer record the API sent for this coupon could not be read, so the copy kept decides nothing). `unchecked`: the
 * code is not known here and the API answered without deciding (the shop's server refused this client, wrong
 * credentials, a wrong `baseUrl`, an error answer): `detail.error` says what happened. `used_on_this_till`: this till
 * already accepted this issued coupon for another order and the API does not show that use yet (`detail.earlierUse`;
 * `acceptRepeatUse` overrides). `used_on_another_till`: another till of the shop accepted this issued coupon (the
 * relay told this till: online as fresh as its live feed, offline what it last heard) and the API does not show that
 * use yet (`detail.otherUse`; `acceptRepeatUse` overrides).
 * @example if (!v.ok && v.reason === 'stale') askManager(v.detail.message);
 */
export type CouponRejection =
  | 'not_found'
  | 'unknown_offline'
  | 'unchecked'
  | 'inactive'
  | 'not_started'
  | 'expired'
  | 'below_minimum'
  | 'app_only'
  | 'not_combinable'
  | 'stale'
  | 'unreadable'
  | 'used_on_this_till'
  | 'used_on_another_till';

/**
 * What a verdict is based on, in words and data (the raw value that could not be read, the stale discount, ...).
 * @example showToCashier(v.detail.message); log(v.detail.rule, v.detail.field, v.detail.value);
 */
export interface VerdictDetail {
  /**
   * The rule that decided: 'lookup', 'record', 'status', 'period', 'parent' (an issued coupon's coupon), 'app',
   * 'combination', 'minimum', 'discount', 'use' (an earlier use of an issued coupon, on this till or another),
   * 'freshness'.
   */
  rule: string;
  /** Why, in words a cashier can act on. */
  message: string;
  /** The field the rule read, and its raw value as received. */
  field?: string;
  value?: unknown;
  /** For `stale`, `used_on_this_till` and `used_on_another_till`: the discount the coupon would give. */
  discount?: number;
  /** For `used_on_this_till`: the earlier sale on this till. */
  earlierUse?: EarlierUse;
  /** For `used_on_another_till`: the other till's use (the earliest one). */
  otherUse?: OtherTillUse;
  /** How old the local data is, ms. */
  dataAgeMs?: number;
  /**
   * Why the shop API did not decide this verdict (it was asked and refused, failed or was too slow), with the URL or
   * path asked: the verdict was decided from local data. Absent when the API decided, or the till is offline.
   */
  error?: LookupError;
}

/**
 * Something about an accepted coupon the cashier may want to check, that does not refuse it.
 * `use_count_reached`: the coupon's `type_coupon_use_count` reached its `type_coupon_create_count` (the API does not
 * say that the issued count is a limit).
 * @example for (const w of v.ok ? (v.warnings ?? []) : []) note(w.message);
 */
export interface VerdictWarning {
  code: 'use_count_reached';
  /** In words a cashier can act on. */
  message: string;
  /** The field read, and its raw value. */
  field?: string;
  value?: unknown;
}

/**
 * The answer of `validateCoupon`. `source`: decided from local data ('local') or from a fresh API answer ('network').
 * @example
 * const v = await lookup.validateCoupon('WELCOME10', { amount: 32000 });
 * if (v.ok) applyDiscount(v.discount); else showReason(v.detail.message);
 */
export type CouponVerdict =
  | {
      ok: true;
      discount: number;
      coupon: Coupon | IssuedCoupon;
      /** 'coupon' or 'issued': which kind of code it was. */
      kind: 'coupon' | 'issued';
      syncedAt: number | null;
      source: 'local' | 'network';
      detail?: VerdictDetail;
      /** The overrides of the order that let this "yes" through (absent when none was needed). */
      overrides?: CouponOverride[];
      /** Facts the cashier may want to check that do not refuse the coupon (absent when none). */
      warnings?: VerdictWarning[];
      /** On a verdict that goes into the journal (see the rejection's `journaled`); `journalError` says why not. */
      journaled?: boolean;
      journalError?: LookupError;
      /** An issued coupon checked online on a relay that takes uses: what the relay's claim said (see UseClaim). */
      claim?: UseClaim;
    }
  | {
      ok: false;
      reason: CouponRejection;
      coupon?: Coupon | IssuedCoupon;
      kind?: 'coupon' | 'issued';
      syncedAt: number | null;
      source: 'local' | 'network';
      detail: VerdictDetail;
      /**
       * On every verdict that goes into the journal: every verdict decided from local data (`source: 'local'`), and
       * every accepted issued coupon. true: the entry is in IndexedDB. false: it is not, and `journalError` says why:
       * storage refused it (full: `quota_exceeded`), and it waits in memory until storage accepts writes again
       * (`status().storage`); or the engine runs in memory (`storage_unavailable`, `storage_upgraded`): the entry is
       * kept there only. Either way a reload loses it, so record this sale another way.
       * @example if (v.journaled === false) keepReceiptForReconciling(code, v, v.journalError?.message);
       */
      journaled?: boolean;
      journalError?: LookupError;
      /** `'refused'`: the relay's claim found the voucher another sale's (`used_on_another_till`). See UseClaim. */
      claim?: UseClaim;
    };

/**
 * What the relay said to an online `validateCoupon` of an issued coupon, asked before the verdict (on a relay whose
 * discovery lists `uses`, unless `acceptRepeatUse` let it through: docs/checkout.md, "Online, the relay decides"):
 * `'granted'`: the relay recorded this sale as the voucher's first use (or the same sale checked again), so no other
 * till can be told yes; `'refused'`: another sale has it (`used_on_another_till`, `detail.otherUse` names it);
 * `'timeout'`: no answer within `claimTimeoutMs`, and `'failed'`: the relay answered an error (`uses_full`,
 * `till_uses_full`, unreachable): the verdict was decided by this till's own rules, and the use is sent as any other.
 * @example if (v.ok && v.claim !== undefined && v.claim !== 'granted') note('decided without the relay');
 */
export type UseClaim = 'granted' | 'refused' | 'timeout' | 'failed';

/**
 * A voided sale given back (`releaseCoupon`): what this till had of it, and where the release stands.
 * @example const r = await lookup.releaseCoupon('IC-7F3K-2Q9M', { orderId: 'A-1017' }); if (r.released === 0) ask();
 */
export interface CouponRelease {
  /** The code, in the one form every lookup uses. */
  code: string;
  orderId: string;
  /**
   * This till's uses of the code for that order that it gave back now: each is dropped here at once (the next check
   * on this till passes) and sent to the shop's relay, which drops it for every till (offline: when the till is back;
   * it waits in the outbox like a use). 0: this till holds no such use (none was made for that order, it was given
   * back already, or the shop API shows the voucher used: then void it in the shop's order system).
   */
  released: number;
  /** The journal entries of the releases (`action: 'release'`), one per use given back. */
  journalIds: number[];
}

/**
 * What to release (`releaseCoupon`): the order whose sale was voided.
 * @example { orderId: 'A-1017' }
 */
export interface ReleaseOrder {
  /** The `orderId` the sale was checked with (a use checked without one cannot be released). */
  orderId: string;
}

/**
 * One journaled verdict: every verdict decided from local data (online or offline, whatever kept the API from
 * deciding), and every accepted issued coupon; kept so the shop can reconcile.
 * Entries kept from before schema version 6 read `key: 'v5-<id>'`, `source: 'local'`, `cause: 'offline'`,
 * `overrides: []`, `orderId: null`, `orderAt: at`, `couponCode: null`: that release did not record them.
 * @example for (const e of await lookup.offlineJournal()) if (e.ok) report(e.code, e.discount, e.orderId, e.at);
 */
export interface JournalEntry {
  id: number;
  /**
   * This entry's own key, unique on every till (128 random bits as 32 hex digits, made when the verdict was given):
   * the same entry sent or written twice is still one entry. Entries kept from before schema version 6 read
   * `'v5-<id>'`.
   */
  key: string;
  code: string;
  amount: number;
  ok: boolean;
  reason: CouponRejection | null;
  discount: number | null;
  /** The `syncedAt` of the data the verdict was based on. */
  syncedAt: number | null;
  /** When the verdict was given, ms. */
  at: number;
  /** Which kind of code it turned out to be; null when no record was found. */
  kind?: 'coupon' | 'issued' | null;
  /**
   * The code of the coupon the record is (for an issued coupon: the one it was issued from); null when none is known.
   */
  couponCode: string | null;
  /** The host's `order.orderId`; null when none was given. */
  orderId: string | null;
  /** The order's time (`order.at`, default the decision time), ms. */
  orderAt: number;
  /** 'local': decided from IndexedDB; 'network': a fresh API answer decided (an accepted issued coupon). */
  source: 'local' | 'network';
  /**
   * Why the API did not decide (with `source: 'local'`): `'offline'` (it was not asked: the till is offline),
   * `'not_asked'` (a storefront's issued coupon: its server refuses issued coupons, so they are never asked), or the
   * code of what its call met (`network_error`, `timeout`, `server_error`, `maintenance`, `rate_limited`,
   * `forbidden`, `bad_credentials`, `unsupported`, `invalid_record`, ...: docs/errors.md). null with `source:
   * 'network'`.
   */
  cause: string | null;
  /** The overrides that let this "yes" through (`acceptStale`, `acceptRepeatUse`); [] when none was needed. */
  overrides: CouponOverride[];
  /**
   * An accepted issued coupon (a use) on a till that syncs from a relay: when the relay acknowledged it, epoch ms;
   * null until then (or when it is no use, or the till shares nothing: it syncs from no relay, or the relay does not
   * take uses). Entries kept from before schema version 7 read null.
   */
  shared: number | null;
  /**
   * A use that another till's use of the same issued coupon conflicts with (the relay found both: docs/checkout.md,
   * "Uses shared between tills"): that till, when and for which order. null: none known.
   */
  conflict: UseConflict | null;
  /** The verdict's `claim` (an online check of an issued coupon on a relay that takes uses); null: none was made. */
  claim: UseClaim | null;
  /**
   * `'release'`: not a verdict but a voided sale given back (`releaseCoupon`): `code`, `orderId`, `amount` and
   * `orderAt` name the sale released, `ok: false` with no `reason` and no `discount` (it is no sale), `shared` when
   * the relay took the release. Entries of verdicts read `'verdict'` (also those kept from before).
   */
  action: 'verdict' | 'release';
  /** A use this till later released (`releaseCoupon`): when, ms; null otherwise. */
  released: number | null;
}

/**
 * One page of the offline journal (`offlineJournal(page)`): entries with an id above `after`, at most `limit`.
 * @example const page = await lookup.offlineJournal({ after: lastId, limit: 500 });
 */
export interface JournalPage {
  /** Entries after this id (the last id of the previous page); default 0, the oldest. */
  after?: number | undefined;
  /** At most this many entries; default 1,000, at most 10,000. */
  limit?: number | undefined;
}

/**
 * Options of `clear()`. @example await lookup.clear({ discardJournal: true });
 */
export interface ClearOptions {
  /**
   * Also delete the offline journal's entries (verdicts not reconciled yet) and this till's uses of issued coupons
   * the API has not confirmed (`used_on_this_till`). Default false: they are kept, and a database that holds another
   * shop's data is not cleared while its journal has entries (`journal_not_empty`).
   */
  discardJournal?: boolean | undefined;
}

/**
 * How coupon `status` values are read (the API does not document them). Statuses are compared case-insensitively.
 * @example { active: ['progress'], inactive: ['stop', 'end', 'ready'], used: ['complete'] }
 */
export interface CouponPolicy {
  /** Statuses of a coupon that may be used. */
  active: string[];
  /** Statuses of a coupon that may not be used. */
  inactive: string[];
  /** Statuses of an issued coupon that mean it was already used. */
  used: string[];
}
