// Public types of the shop relay. Types only: every other relay file imports from here.
import type { UsesRecord } from '@shop-lookup/shop-api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authorize, ClientId, ClientLimits, CorsOptions } from './door/types';
import type { RelayStore, ResourceId, StoreHealth } from './store/relayStore';
import type { UsesEvent } from './feed/usesRoute';

export type { UsesEvent };

export type { Authorize, ClientId, ClientLimits, CorsOptions, RouteName } from './door/types';

/**
 * Options of createShopRelay. The key and secret stay on the server: tills and storefronts only talk to the relay.
 * @example createShopRelay({ key: process.env.SHOP_API_KEY!, secret: process.env.SHOP_API_SECRET!, basePath:
 * '/shop-api', authorize: (req) => tillTokens.has(String(req.headers['x-till'])) })
 */
export interface ShopRelayOptions {
  /** The shop's admin API key (server side only). @example { key: process.env.SHOP_API_KEY! } */
  key: string;
  /** The shop's admin API secret (server side only). @example { secret: process.env.SHOP_API_SECRET! } */
  secret: string;
  /** Upstream origin; default 'https://api.imweb.me'. @example { target: 'http://127.0.0.1:8787' } */
  target?: string | undefined;
  /**
   * Mount prefix; default ''. The six API paths and `relay/v1/…` are served under it. With no basePath the relay
   * claims only '/v2…' and '/relay…'.
   * @example { basePath: '/shop-api' }
   */
  basePath?: string | undefined;
  /**
   * Where the shared state lives: a Redis URL, a node-redis client, or a node-redis cluster (createCluster(); every
   * key of a shop carries the hash tag `{shopId}`), so several instances share one sync; omitted: the embedded
   * in-memory store (one instance).
   * @example { redis: process.env.REDIS_URL }
   */
  redis?: string | object | undefined;
  /**
   * A store made by createMemoryStore(), which several relays of this process share (a till relay and a storefront
   * relay on one listing, tests); wins over `redis`. A store of your own is not supported: the RelayStore interface
   * is the relay's internal contract, and changes with it.
   * @example { store: createMemoryStore() }
   */
  store?: RelayStore | undefined;
  /**
   * Decides per request who may ask what: true lets it through, false answers 403, `{ status: 401, message }` says
   * how to log in. Without authorize and without `public: true`, every request is answered 401.
   * @example { authorize: (req, route) => route === 'productOptions' || req.headers['x-till'] ===
   * process.env.TILL_TOKEN }
   */
  authorize?: Authorize | undefined;
  /**
   * true: anybody may ask everything (a relay on a private network only). Ignored when `authorize` is given.
   * @example { public: true }
   */
  public?: boolean | undefined;
  /**
   * Answers for browser pages on other origins (a till served from its own domain): the listed origins may send
   * their `Authorization` and read every answer (the feed's long-poll included), `anyOriginRoutes` are readable from
   * any origin without credentials; other origins get no CORS headers. Omitted: no CORS headers (same-origin pages).
   * @example { cors: { origins: ['https://till.example'], anyOriginRoutes: ['productOptions', 'productOption',
   * 'coupon'] } }
   */
  cors?: CorsOptions | undefined;
  /** How often the relay lists the API again, ms; default 300_000 (5 min). @example { refreshIntervalMs: 60_000 } */
  refreshIntervalMs?: number | undefined;
  /**
   * Requests per second to the shop API, shared by every instance on the same store; default { list: 1, other: 5 }.
   * false: no limit (tests against a mock).
   * @example { rateLimits: { list: 1, other: 5 } }
   */
  rateLimits?: { list?: number; other?: number } | false | undefined;
  /**
   * Names the shop in discovery and status (the till's database identity check); default a SHA-256 prefix of the key.
   * @example { shopId: 'my-shop' }
   */
  shopId?: string | undefined;
  /**
   * Products whose options are listed from the start (added to the shop-wide set, never dropped).
   * @example { products: [13801, 13805] }
   */
  products?: number[] | undefined;
  /**
   * Most products one shop's relay lists (tracked by `POST relay/v1/products` after the API confirmed each one;
   * the host's `products` count too); beyond it a POST with new products gets 409 `too_many_products`. Default 100.
   * @example { maxTrackedProducts: 500 }
   */
  maxTrackedProducts?: number | undefined;
  /**
   * A product no till asked for (`POST relay/v1/products`) in this long is no longer listed (the host's `products`
   * stay), ms; default 30 days. @example { productTtlMs: 7 * 24 * 60 * 60 * 1000 }
   */
  productTtlMs?: number | undefined;
  /**
   * Share of the upstream calls kept for the relay's own listing while it waits (0 to 1); the clients' reads share
   * the rest, in turn. Default 0.75: a listing takes at most about 4/3 of its time while clients flood the relay.
   * @example { listingShare: 0.5 }
   */
  listingShare?: number | undefined;
  /**
   * Who a request comes from, for the per-client bounds, refused-request counts and upstream turns; default the
   * remote address. Behind a load balancer, read the address it forwards; never a header a client picks freely
   * (a guesser would then be a new client with every request). An address counts as its network (/24, /64);
   * return `{ id, identified: true }` for a client you know (a till by its token): identified clients' reads have
   * their own share of the upstream budget and never queue behind anonymous ones (see ClientId).
   * @example { clientId: (req) => tillOf(req) ? { id: tillOf(req), identified: true } :
   * String(req.headers['x-forwarded-for'] ?? req.socket.remoteAddress).split(',')[0]!.trim() }
   */
  clientId?: ((req: IncomingMessage) => ClientId) | undefined;
  /**
   * Per-client bounds: requests at once, queued, per second, waiting for the shop API (and how long an anonymous
   * one waits there), refused per minute (per network); over them a client gets 429 with Retry-After. false: no
   * bounds. Default { concurrent: 8, queued: 32, perSecond: 20, burst: 60, maxWaitMs: 10_000, upstreamQueued: 4,
   * anonymousWaitMs: 10_000, refusedPerMinute: 10 }.
   * @example { clientLimits: { concurrent: 4, perSecond: 10 } }
   */
  clientLimits?: ClientLimits | false | undefined;
  /**
   * Timeout of each upstream request (not counting the rate-limit wait), ms; default 15_000.
   * @example { timeoutMs: 5_000 }
   */
  timeoutMs?: number | undefined;
  /**
   * The most bytes one upstream answer may have, decoded (a gzip or br answer counts as it inflates), by what was
   * asked; a longer one is dropped unread (`bad_response` naming the bound; a client gets 502). Default
   * { list: 8 MiB, item: 1 MiB } (a list page is at most 100 records; a /v2/auth answer may have 64 KiB).
   * @example { maxAnswerBytes: { list: 32 * 1024 * 1024 } }
   */
  maxAnswerBytes?: { list?: number | undefined; item?: number | undefined } | undefined;
  /**
   * Longest accepted request URL, with basePath and query; default 2048, longer gets 414.
   * @example { maxUrlLength: 1024 }
   */
  maxUrlLength?: number | undefined;
  /**
   * How long an answer to a single item is reused for identical requests, ms; default 2_000.
   * @example { itemCacheMs: 0 }
   */
  itemCacheMs?: number | undefined;
  /** Longest long-poll `wait` a client may ask, s; default 60. @example { maxWaitSeconds: 30 } */
  maxWaitSeconds?: number | undefined;
  /** How long the sync lease is held without renewal, ms; default 30_000. @example { leaseMs: 10_000 } */
  leaseMs?: number | undefined;
  /**
   * Retries of an upstream list page that failed transiently (5xx, 429, timeout); default
   * { retries: 5, baseDelayMs: 1_000, maxDelayMs: 30_000 }.
   * @example { retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 } }
   */
  retry?: { retries: number; baseDelayMs: number; maxDelayMs: number } | undefined;
  /** Page size of upstream list calls; default 100 (the API's maximum). @example { pageSize: 100 } */
  pageSize?: number | undefined;
  /** The fetch used upstream; default globalThis.fetch. @example { fetch: undiciFetch } */
  fetch?: typeof fetch | undefined;
  /** Clock, ms; default Date.now. @example { now: () => fakeNow } */
  now?: (() => number) | undefined;
  /**
   * Long-polls parked at once on this instance; one more is answered 503 with Retry-After (the till polls again
   * later), while every other request is still served. Default 5_000.
   * @example { maxLongPolls: 2_000 }
   */
  maxLongPolls?: number | undefined;
  /**
   * Issued-coupon uses the tills reported (POST relay/v1/uses) kept per shop; past it the expired codes go first,
   * then a POST is answered 503 `uses_full` with Retry-After. A use is kept until the shop API shows its code used
   * (then a mark of it stays for retention), its till releases it, an operator drops it (`dropUses`), its code turns
   * out not to exist, or `usesRetentionMs` passes. The memory store keeps them in this process only (lost on
   * restart: the tills send theirs again when they see the relay's new feed). Default 100_000.
   * @example { maxUses: 20_000 }
   */
  maxUses?: number | undefined;
  /**
   * One till's share of `maxUses` (by its till token's name, else its device): past it that till's POSTs are
   * answered 429 `till_uses_full` and nobody else's, so one till (a stolen token) cannot fill the shop's uses. Uses
   * of codes the shop does not have count against it until `usesRetentionMs` passes. Default a twentieth of
   * `maxUses`, at least 100 (5,000 of the default 100,000).
   * @example { maxUsesPerTill: 2_000 }
   */
  maxUsesPerTill?: number | undefined;
  /**
   * How long a code's uses are kept after the newest of them was received, ms. Default 30 days.
   * @example { usesRetentionMs: 7 * 86_400_000 }
   */
  usesRetentionMs?: number | undefined;
  /**
   * Hooks for logs and metrics: the relay tells what happens (listings, the sync lease, the store's health, its log
   * lines) and never waits for them. The `shop-lookup-relay` command plugs pino and prom-client in here. Without
   * `log`, lines go to the console.
   * @example { observer: { listing: (e) => log.info(e, 'listing'), log: (level, msg, e) => log[level]({ err: e },
   * msg) } }
   */
  observer?: RelayObserver | undefined;
}

/** What the relay tells its host (logs, metrics); every hook is optional and must not throw. */
export interface RelayObserver {
  /**
   * A listing of one resource ended: committed (`ok`), or failed (`error` in words). `durationMs`: from the start of
   * the listing (on whichever instance started it) to its commit; null when it failed.
   */
  listing?(event: {
    resource: ResourceId;
    ok: boolean;
    durationMs: number | null;
    upserts: number;
    deletes: number;
    rejected: number;
    error: string | null;
  }): void;
  /** This instance took (true) or gave up (false) the sync lease: it is the one listing the API now. */
  lease?(held: boolean): void;
  /** The store's health changed (Redis lost, Redis back). */
  storeHealth?(health: StoreHealth): void;
  /**
   * A line the relay would write to the console (a listing that failed, a request that failed, authorize that
   * threw): its message redacted (no key, secret, token or password), and the error as it was thrown.
   */
  log?(level: 'warn' | 'error', message: string, error?: unknown): void;
  /** What happened to the tills' uses of issued coupons (recorded, released, dropped, refused): for metrics. */
  uses?(event: UsesEvent): void;
}

/**
 * The uses an operator lists (`relay.listUses`, `GET /ops/uses`): per issued code, the uses the relay holds, each with
 * the till that sent it, its order and times (`at`: as the relay orders it; `claimedAt`: the till's own), and whether
 * it conflicts with the first; `confirmed`: when the shop API was seen showing the code used.
 * @example for (const r of await relay.listUses()) console.log(r.code, r.uses.map((u) => u.till));
 */
export type UsesList = UsesRecord[];

/** Where the relay stands, as `GET {basePath}/relay/v1/status` answers it. */
export interface RelayStatus {
  shop: string;
  handle: string | null;
  version: number | null;
  products: number[];
  confirmedAt: Record<string, number>;
  listing: { resource: string; page: number; totalPages: number | null } | null;
  store: 'memory' | 'redis';
  degraded: boolean;
  error: string | null;
  /** This instance's id (the sync lease owner name). */
  instance: string;
  /** Long-polls parked on this instance now. */
  waiting: number;
  /** True while a refresh here waits for another instance's listing (it counts that listing instead of a second). */
  waitingForLister: boolean;
  /** Requests of this instance waiting for their turn at the shop API (clients' reads and its own listing). */
  upstreamWaiting: number;
  /**
   * Snapshot chunks this instance compressed for its tills (once per version and coding: the next tills, and the
   * other instances on the same store, get the kept bytes).
   */
  chunksCompressed: number;
}

/**
 * The relay: a node:http / connect / Express / Vite middleware.
 * @example const relay = createShopRelay({ key, secret, public: true }); http.createServer(relay).listen(8080);
 */
export interface ShopRelay {
  /**
   * node:http / connect / Express / Vite dev-server middleware; with `next`, requests outside basePath go to next().
   * @example app.use(relay);
   */
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /**
   * Resolves once the store is open and the first sync has been started (not finished).
   * @example await relay.ready;
   */
  ready: Promise<void>;
  /**
   * Lists everything now (after a listing this instance has under way), resolving when done; for tests and
   * operators. When another instance is listing, this one waits for that listing and counts it: it resolves when
   * that listing commits (and lists only what it left out). `{ due: true }`: only what is due, as the relay's own
   * timer would (a hub's sweep over its shops).
   * @example await relay.refresh();
   */
  refresh(options?: { due?: boolean }): Promise<void>;
  /** Where the relay stands. @example (await relay.status()).version */
  status(): Promise<RelayStatus>;
  /**
   * Asks `authorize` again about every feed request under way (long-polls parked among them) and ends those it now
   * refuses with that refusal (401/403), at once: call it after revoking a till's token. Resolves with how many it
   * ended. @example tokens.revoke('front-2'); await relay.reauthorize();
   */
  reauthorize(): Promise<number>;
  /**
   * Drops the tills' uses of issued coupons the relay holds: every use of `till` (its till token's name, or the
   * device id of a till without one), the uses of `codes`, or that till's uses of those codes (at least one of the
   * two). Every till hears it through the feed at once; logged with `by` and how many. For a voucher marked used by
   * mistake (a stolen till token, a sale voided on a till that is gone). Resolves how many codes and uses went.
   * @example await relay.dropUses({ till: 'front-3' }); await relay.dropUses({ codes: ['IC-7F3K-2Q9M'] });
   */
  dropUses(filter: { till?: string; codes?: string[]; by?: string }): Promise<{ codes: number; uses: number }>;
  /**
   * Lists the uses the relay holds (every till's, or `till`'s; every code, or `codes`), at most `limit` codes (default
   * and at most 1,000): what an operator checks before dropping.
   * @example const held = await relay.listUses({ till: 'front-3' });
   */
  listUses(filter?: { till?: string; codes?: string[]; limit?: number }): Promise<UsesList>;
  /**
   * Stops the sync, answers parked long-polls, aborts upstream requests, closes the store.
   * @example server.on('close', () => relay.close());
   */
  close(): Promise<void>;
}
