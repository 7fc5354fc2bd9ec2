// Public types of the relay hub: many shops under one mount, each with its own credentials, store keys, upstream
// rate limit, token and sync lease. Types only.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouteName } from '../door/types';
import type { StoreHealth } from '../store/relayStore';
import type { RelayObserver, RelayStatus, ShopRelayOptions, UsesEvent, UsesList } from '../types';

/**
 * One shop's upstream credentials, as the host's `credentials(shopId)` gives them (its database, its secret store).
 * @example { key: row.apiKey, secret: await vault.read(`shops/${shopId}/secret`) }
 */
export interface ShopCredentials {
  /** The shop's admin API key. */
  key: string;
  /** The shop's admin API secret. */
  secret: string;
  /** Upstream origin of this shop; default the hub's `target`. @example { target: 'https://api.imweb.me' } */
  target?: string;
}

/**
 * Decides per request and shop who may ask what: true lets it through, false answers 403, `{ status: 401, message }`
 * says how to log in. `shopId` is the shop the path names: a till token of one shop must not open another's.
 * @example (req, route, shopId) => tills.shopOf(String(req.headers['x-till'])) === shopId
 */
export type HubAuthorize = (
  req: IncomingMessage,
  route: RouteName,
  shopId: string,
) => boolean | { status: 401 | 403; message: string } | Promise<boolean | { status: 401 | 403; message: string }>;

/** The createShopRelay options every shop of a hub shares. */
export type HubShopOptions = Pick<
  ShopRelayOptions,
  | 'target'
  | 'refreshIntervalMs'
  | 'rateLimits'
  | 'maxTrackedProducts'
  | 'productTtlMs'
  | 'listingShare'
  | 'clientId'
  | 'clientLimits'
  | 'timeoutMs'
  | 'maxUrlLength'
  | 'itemCacheMs'
  | 'maxWaitSeconds'
  | 'leaseMs'
  | 'retry'
  | 'pageSize'
  | 'fetch'
  | 'now'
  | 'maxLongPolls'
  | 'cors'
  | 'maxUses'
  | 'maxUsesPerTill'
  | 'usesRetentionMs'
>;

/**
 * Options of createRelayHub: the shared ones of createShopRelay, plus where shops come from.
 * @example createRelayHub({ credentials: (id) => db.shopCredentials(id), redis: process.env.REDIS_URL, basePath:
 * '/api', authorize })
 */
export interface RelayHubOptions extends HubShopOptions {
  /**
   * The credentials of a shop, or null for a shop the hub does not serve (answered 404). Called when a shop is first
   * asked for and again after `credentialsTtlMs`: a shop added, rotated or removed there is seen without a restart.
   * @example { credentials: async (shopId) => (await db.shops.find(shopId))?.credentials ?? null }
   */
  credentials(shopId: string): ShopCredentials | null | Promise<ShopCredentials | null>;
  /**
   * How long a shop's credentials are used before asking `credentials` again, ms; default 60_000.
   * @example { credentialsTtlMs: 10_000 }
   */
  credentialsTtlMs?: number | undefined;
  /**
   * Mount prefix; shops are served under `{basePath}/shops/{shopId}/…`; default ''.
   * @example { basePath: '/relay' }
   */
  basePath?: string | undefined;
  /**
   * Where the shops' state lives: a Redis URL, a node-redis client or cluster. The shops share the hub's connections:
   * the main one, one for pub/sub and one for transactions (on a cluster: the two per master), none per shop.
   * Omitted: a memory store per shop, lost when the shop is evicted (one instance, tests).
   * @example { redis: process.env.REDIS_URL }
   */
  redis?: string | object | undefined;
  /** Who may ask what of which shop; without it and without `public: true` every request is answered 401. */
  authorize?: HubAuthorize | undefined;
  /** true: anybody may ask everything of every shop (a private network only). Ignored when `authorize` is given. */
  public?: boolean | undefined;
  /**
   * Shops kept open in this instance (each its relay: head, leases, limits, long-polls; about 70 kB without its
   * records); the least recently asked one beyond it is closed (its data stays in Redis) and opened again when asked.
   * Default 100. @example { maxHotShops: 500 }
   */
  maxHotShops?: number | undefined;
  /**
   * Records (coupons and options, over every shop) this instance holds in memory; default 500,000 (about 200 MB:
   * 0.8 MB per 2,000 coupons, docs/hub.md; more for larger records). A shop's records are loaded once a
   * till has read its snapshot to the end from Redis (or a client asked for a list); beyond the budget the least
   * recently used shops let theirs go and are served straight from Redis (snapshot chunks in key order, changes from
   * the log). With a memory store (no `redis`) every open shop holds its records. @example { maxHotRecords: 2_000_000 }
   */
  maxHotRecords?: number | undefined;
  /** Upstream listings this instance runs at once, over all its shops (a shop lists under its own lease); default 4. */
  maxConcurrentListings?: number | undefined;
  /**
   * Every shop the hub serves, so shops nobody asks for are listed too: each instance walks them every
   * `sweepIntervalMs` (and at start), lists the due ones nobody else is listing (up to `maxConcurrentListings` at
   * once), and takes a shop over when another instance's lease on it lapses (a crashed instance). Without it, only
   * shops asked for (hot) are listed. Needs `redis` to share the work. @example { shops: () => db.shopIds() }
   */
  shops?: (() => Iterable<string> | Promise<Iterable<string>>) | undefined;
  /**
   * How often the walk over `shops` starts, ms; default min(refreshIntervalMs, 60_000).
   * @example { sweepIntervalMs: 30_000 }
   */
  sweepIntervalMs?: number | undefined;
  /** Told what the hub does (a shop made hot, evicted, its credentials changed) and its log lines. */
  observer?: RelayHubObserver | undefined;
}

/** What the hub tells its host; every hook is optional and must not throw. */
export interface RelayHubObserver {
  /** A shop became hot (`open`), was evicted or removed (`close`), or its credentials changed (`rotate`). */
  shop?(event: { shopId: string; kind: 'open' | 'close' | 'rotate' }): void;
  /** A shop's listing of one resource ended here (createShopRelay's `listing` hook, with the shop). */
  listing?(event: Parameters<NonNullable<RelayObserver['listing']>>[0] & { shopId: string }): void;
  /** This instance took (true) or gave up (false) a shop's sync lease. */
  lease?(event: { shopId: string; held: boolean }): void;
  /**
   * The hub's store (the Redis connections every shop shares) was lost or is back; also told when Redis cannot be
   * reached to open the shops at all. Never told with memory stores.
   */
  storeHealth?(health: StoreHealth): void;
  /** A line the hub (or one of its shops) would write to the console, redacted. */
  log?(level: 'warn' | 'error', message: string, error?: unknown): void;
  /** What happened to a shop's tills' uses of issued coupons (createShopRelay's `uses` hook, with the shop). */
  uses?(event: UsesEvent & { shopId: string }): void;
}

/** Where a hub stands. */
export interface RelayHubStatus {
  /** Shops open in this instance, least recently asked first. */
  hot: string[];
  /** Shops whose records are held in memory, least recently used first (the others are read from Redis). */
  inMemory: string[];
  /** Records held in memory over every shop: at most `maxHotRecords` (but while one shop's records are loaded). */
  hotRecords: number;
  /** Listings running in this instance now (by shop), and how many wait for a turn. */
  listings: { running: string[]; waiting: number };
  /** Shops another instance lists now, looked at again when its lease would lapse. */
  watching: string[];
}

/**
 * The hub: a node:http / connect / Express middleware serving many shops.
 * @example const hub = createRelayHub({ credentials, redis, public: true }); http.createServer(hub).listen(8080);
 */
export interface RelayHub {
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /**
   * Lists one shop now (making it hot), resolving when done; for tests and operators. Rejects for an unknown shop.
   * @example await hub.refresh('shop-7f3a');
   */
  refresh(shopId: string): Promise<void>;
  /**
   * Walks every shop of `shops` now (joins a walk under way), listing the due ones; resolves when its listings are
   * done. @example await hub.sweep();
   */
  sweep(): Promise<void>;
  /**
   * Forgets a shop's cached credentials and closes it here at once (after a rotation or removal the host knows of);
   * the next request asks `credentials` again. @example await hub.forget('shop-7f3a');
   */
  forget(shopId: string): Promise<void>;
  /**
   * One shop's `relay.dropUses` (making it hot): drops the tills' uses of issued coupons by till and/or codes, logged
   * with `by`. Rejects for an unknown shop. @example await hub.dropUses('shop-7f3a', { till: 'front-3' });
   */
  dropUses(
    shopId: string,
    filter: { till?: string; codes?: string[]; by?: string },
  ): Promise<{ codes: number; uses: number }>;
  /** One shop's `relay.listUses`. Rejects for an unknown shop. @example await hub.listUses('shop-7f3a', { till }); */
  listUses(shopId: string, filter?: { till?: string; codes?: string[]; limit?: number }): Promise<UsesList>;
  /** @example hub.status().hot.length */
  status(): RelayHubStatus;
  /**
   * The status of every shop open in this instance, as each one's `relay/v1/status` answers it (for metrics).
   * @example for (const s of await hub.shopStatuses()) gauge.set({ shop: s.shop }, s.version ?? 0);
   */
  shopStatuses(): Promise<RelayStatus[]>;
  /**
   * Asks `authorize` again about every feed request under way in every open shop (long-polls parked among them) and
   * ends those it now refuses with that refusal (401/403): call it after revoking a till's token. Resolves with how
   * many it ended. @example await hub.reauthorize();
   */
  reauthorize(): Promise<number>;
  /** Closes every shop and the shared Redis connection. @example server.on('close', () => hub.close()); */
  close(): Promise<void>;
}
