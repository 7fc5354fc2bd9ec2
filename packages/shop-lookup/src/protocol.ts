// The contract between the host side (src/) and the engine (worker/): the only file of src/ that worker/ imports.
// The messages are types (both sides `import type` them; everything must survive structured clone); with them
// travel the public data types and the one error class both sides throw and match on `code`.
import type { ShopLookup } from './shopLookup';
import type { LookupResult, ShopLookupOptions, SyncStatus } from './types';

export type * from './types';
export type * from './toolTypes';
export { ShopLookupError, toLookupError } from './errors';

/** One of the six lookups, as data. */
export type LookupQuery =
  | { kind: 'coupons' }
  | { kind: 'coupon'; code: string }
  | { kind: 'issuedCoupon'; code: string }
  | { kind: 'productOptions'; productNo: number }
  | { kind: 'productOptionByNo'; productNo: number; optionNo: number }
  | { kind: 'productOptionByCode'; productNo: number; optionCode: string };

/** What a watch follows: a lookup, or the engine's status. */
export type WatchQuery = LookupQuery | { kind: 'status' };

/** The options the engine needs; all clonable (no functions, no factories). Documented on ShopLookupOptions. */
export type EngineOptions = Pick<
  ShopLookupOptions,
  | 'baseUrl'
  | 'auth'
  | 'products'
  | 'refreshIntervalMs'
  | 'source'
  | 'coupons'
  | 'dbName'
  | 'shopId'
  | 'rateLimits'
  | 'requestTimeoutMs'
  | 'pageSize'
  | 'retry'
  | 'couponPolicy'
  | 'timeZone'
  | 'maxDataAgeMs'
  | 'claimTimeoutMs'
>;

/**
 * Called by the engine for every emission of every watch. One listener per connection (one Comlink proxy),
 * so a subscription costs no MessageChannel of its own.
 */
export type WatchListener = (id: number, value: LookupResult<unknown> | SyncStatus) => void;

/**
 * The engine's surface: ShopLookup's calls that are not lookups, served as they are, and the watches behind the
 * lookups. In a worker each method is reached through Comlink and returns a Promise.
 */
export interface EngineApi
  extends Pick<
    ShopLookup,
    | 'sync'
    | 'trackProducts'
    | 'prefetchIssuedCoupons'
    | 'validateCoupon'
    | 'releaseCoupon'
    | 'offlineJournal'
    | 'clearOfflineJournal'
    | 'refresh'
    | 'exportJournal'
    | 'inspect'
    | 'clear'
    | 'close'
  > {
  /**
   * Start following `query`: the first emission is this call's answer (one message less on the way of every
   * lookup), later ones arrive at the listener tagged with `id`. Null when the watch ended before its first.
   */
  watchFirst(id: number, query: WatchQuery): Promise<LookupResult<unknown> | SyncStatus | null>;
  /** Stop following `id`. */
  unwatch(id: number): void;
  /** Watches the engine currently follows (diagnostics: 0 after every subscription ended). */
  activeWatches(): number;
  /** The page's answer to `navigator.storage.persist()` (only a window can ask), shown in status(). */
  setPersisted(persisted: boolean): void;
  /** The page's online/offline events: Chromium does not deliver them to workers. */
  setNetworkOnline(online: boolean): void;
}

/**
 * Asks the host for the till's token (the `token` option): a function cannot travel in the options, so a worker gets
 * this as a Comlink proxy of the host's own and calls it back (at the first request, and again after a 401).
 */
export type AskToken = () => Promise<string>;

/** What the worker entry exposes: the engine, after `start` gave it its options, listener and token asker. */
export interface WorkerApi extends EngineApi {
  start(options: EngineOptions, listener: WatchListener, askToken?: AskToken): Promise<void>;
}
