// Public types of shop-lookup. Types only: both the host side (src/) and the engine (worker/) import them.
import type { Endpoint } from 'comlink';

/**
 * A coupon as the shop API sent it. Every field that arrived is kept, including ones the spec does not list.
 * Integers that arrived as strings are numbers here; booleans that arrived as "Y"/"N" or 1/0 are booleans.
 * Dates and `use_period` are kept exactly as received (their format is not specified upstream).
 * @example
 * const c: Coupon = { coupon_code: 'WELCOME10', apply_sale_percent: 10, status: 'progress' };
 */
export interface Coupon {
  coupon_code: string;
  status?: string | null;
  apply_sale_price?: number | null;
  apply_sale_percent?: number | null;
  apply_sale_type_max_price?: number | null;
  apply_sale_type_minimum_price?: number | null;
  name?: string | null;
  type?: string | null;
  type_coupon_create_count?: number | null;
  type_coupon_use_count?: number | null;
  use_period?: string | number | null;
  create_date?: string | number | null;
  edit_date?: string | number | null;
  is_duplication?: boolean | null;
  use_app?: boolean | null;
  [field: string]: unknown;
}

/**
 * An issued coupon: the coupon fields plus the issue fields that arrive (`coupon_issue_code`, `shop_order_code`,
 * `use_date`, ...). `coupon_code` may be missing on an issued coupon.
 * @example
 * const ic: IssuedCoupon = { coupon_issue_code: 'IC-7F3K-2Q9M', status: 'progress', apply_sale_price: 3000 };
 */
export interface IssuedCoupon extends Omit<Coupon, 'coupon_code'> {
  coupon_code?: string | null;
  coupon_issue_code?: string | null;
  shop_order_code?: string | null;
  use_date?: string | number | null;
}

/** One value of a `default` or `color` option. @example { code: 'C01', name: '블랙' } */
export interface OptionValue {
  code: string;
  name?: string | null;
  [field: string]: unknown;
}

/**
 * A product option. `value_list` is always an array (empty for `input` options), whatever shape arrived.
 * @example
 * const o: ProductOption = { product_no: 13805, no: 12, code: 'SIZE', type: 'default', name: '사이즈',
 *   is_require: true, value_list: [{ code: 'S', name: 'S' }] };
 */
export interface ProductOption {
  product_no: number;
  no: number;
  code?: string | null;
  type?: 'default' | 'input' | 'color' | (string & {}) | null;
  name?: string | null;
  value_list: OptionValue[];
  is_require?: boolean | null;
  [field: string]: unknown;
}

/**
 * An error as plain data: it survives the worker boundary (structured clone drops classes), so match on `code`.
 * @example if (result.error?.code === 'rate_limited') showBanner(result.error.message);
 */
export interface LookupError {
  /** Stable machine-readable code, e.g. `network_error`, `rate_limited`, `not_found`, `invalid_record`. */
  code: string;
  /** What happened, in words a person can act on. */
  message: string;
  /** HTTP status, when an answer arrived. */
  status?: number;
  /** The API's own (negative) body code, e.g. -7. */
  apiCode?: number;
  /** For `invalid_record`: what was wrong, as `{ path, message }` issues. */
  issues?: RecordIssue[];
}

/** One validation problem of a record: where and why. @example { path: 'data.list[3].apply_sale_price', message: 'expected an integer, got "abc"' } */
export interface RecordIssue {
  path: string;
  message: string;
}

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

/** Sync state of the engine, as `status()` emits it. */
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
}

/** The outcome of `sync()` / `prefetchIssuedCoupons()`. */
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
}

/** Per-class request rate limits, in requests per second. */
export interface RateLimits {
  /** List calls (coupon listing, product option listing). Default 1. */
  list?: number;
  /** All other calls, including auth. Default 5. */
  other?: number;
}

/** Credentials: shop admin key/secret (server side only!), or a token the host already has. */
export type ShopAuth = { key: string; secret: string } | { accessToken: string };

/** Options of `createShopLookup`. Only `baseUrl` is required. */
export interface ShopLookupOptions {
  /** The API origin (`https://api.imweb.me`) or a same-origin proxy path such as `'/shop-api'`. */
  baseUrl: string;
  /**
   * `{ key, secret }`: a token is fetched from /v2/auth and renewed when it expires (keep these out of browser
   * bundles: use a proxy there). `{ accessToken }`: a token the host already has. Omitted: no token is sent.
   */
  auth?: ShopAuth;
  /** Product numbers whose options are kept synced. @example products: [13801, 13805] */
  products?: number[];
  /** Background refresh period while online, ms. Default 300_000 (5 minutes). */
  refreshIntervalMs?: number;
  /** IndexedDB database name; one per shop. Default 'shop-lookup'. */
  dbName?: string;
  /**
   * Default true where `Worker` exists. false: run the same engine in this thread (Node, SSR, tests).
   * A function: create the worker yourself (bundlers that do not understand `new URL(..., import.meta.url)`),
   * e.g. `worker: () => new Worker(new URL('shop-lookup/worker', import.meta.url), { type: 'module' })`.
   */
  worker?: boolean | (() => EngineEndpoint);
  /** IndexedDB factory for `worker: false` in Node, e.g. fake-indexeddb's. */
  indexedDB?: IDBFactory;
  IDBKeyRange?: typeof IDBKeyRange;
  /** Custom fetch (`worker: false` only: functions cannot cross into a worker). Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Client-side rate limits, requests per second. Default `{ list: 1, other: 5 }` (the API's documented limits); false = none. */
  rateLimits?: RateLimits | false;
  /** Per-request timeout, ms. Default 15_000. */
  requestTimeoutMs?: number;
  /** Page size of list calls. Default 100 (the API's maximum). */
  pageSize?: number;
  /**
   * Retries of background sync work (5xx, -19, -999, throttling, timeouts, dropped connections): exponential
   * backoff with jitter. Default `{ retries: 5, baseDelayMs: 1000, maxDelayMs: 30_000 }`.
   */
  retry?: { retries?: number; baseDelayMs?: number; maxDelayMs?: number };
}

/** Anything Comlink can talk to: a Worker, a MessagePort, a SharedWorker's port. */
export type EngineEndpoint = Endpoint;
