// The relay as a request handler: the credential proxy's six GET paths (lists answered from the synced snapshot,
// single items read through with single-flight) plus the feed for tills (docs/feed-protocol.md), behind the same
// door as the proxy (authorize or public, per-client bounds), with one upstream sync per shop shared through the
// store.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { normalizeBasePath, type AllowedRoute } from './door/allowedPaths';
import type { Client } from './door/clientIdentity';
import { createFairShare, type FairShare } from './door/fairShare';
import { createForwarder } from './door/forwardRequest';
import { createCors } from './door/cors';
import { createDoor } from './door/createDoor';
import { apiRefusal, jsonAnswer, type ProxyAnswer } from './door/proxyAnswers';
import { createRedaction, urlSecrets } from './door/redaction';
import type { OwnRoutes } from './door/nameRoute';
import type { RefusalBounds } from './door/refusalBounds';
import { createRequestGate, markedRefusals } from './door/requestGate';
import { createServerLog, type ServerLog } from './door/serverLog';
import type { RouteName } from './door/types';
import { checkAccess, type AccessOptions } from './door/access';
import { allowedRoutes, discoveryOpen } from './routeAccess';
import { failureText, upstreamWhere } from './door/upstreamErrors';
import {
  createApiClient,
  createTransport,
  DEFAULT_PAGE_SIZE,
  DEFAULT_RATE_LIMITS,
  DEFAULT_TARGET,
  DEFAULT_TIMEOUT_MS,
  type DiscoveryAnswer,
  RELAY_PATHS,
  RELAY_PROTOCOL,
  SYNC_RETRY,
} from '@shop-lookup/shop-api';
import { CLIENT_LIMITS, RELAY_DEFAULTS } from './defaults';
import { createFeedMirror, type FeedMirror, type MirrorHolding } from './feed/feedMirror';
import { createLongPolls } from './feed/longPolls';
import { openRelayStore } from './store/openStore';
import type { RelayStore, ResourceId } from './store/relayStore';
import { createKeptChunks } from './feed/keptChunks';
import { createSnapshotCursors } from './feed/snapshotCursors';
import { feedError, serveFeed, type FeedContext } from './feed/serveFeed';
import { createProductTracking, type ProductTracking } from './upstream/productTracking';
import { checkRelayOptions } from './relayOptions';
import { createSingleFlight } from './upstream/singleFlight';
import { listAnswer } from './feed/snapshotList';
import { storeTokenSlot } from './store/storeTokenSlot';
import type { RelayStatus, ShopRelay, ShopRelayOptions } from './types';
import { createUpstreamSync, type UpstreamSync } from './upstream/upstreamSync';
import { createUsesRoute, defaultUsesPerTill, type UsesRoute } from './feed/usesRoute';
import { startUsedCodeChecks } from './upstream/usedCodeChecks';

const RELAY_ROUTES: Record<string, { name: RouteName; methods: string[] }> = {
  [`/${RELAY_PATHS.discovery}`]: { name: 'discovery', methods: ['GET'] },
  [`/${RELAY_PATHS.feed}`]: { name: 'feed', methods: ['GET'] },
  [`/${RELAY_PATHS.products}`]: { name: 'products', methods: ['GET', 'POST'] },
  [`/${RELAY_PATHS.status}`]: { name: 'status', methods: ['GET'] },
  [`/${RELAY_PATHS.uses}`]: { name: 'uses', methods: ['POST'] },
};
const RELAY_SHAPES =
  'GET relay/v1, relay/v1/feed, relay/v1/status, GET or POST relay/v1/products, and POST relay/v1/uses';

/** The routes a relay serves and its words about what it refuses (the door's; a hub names a shop's route with them). */
export const RELAY_SERVED = {
  own: {
    prefix: '/relay',
    routes: RELAY_ROUTES,
    served: `the relay serves ${RELAY_SHAPES}`,
    format: feedError,
  } satisfies OwnRoutes,
  pathHint: `; and ${RELAY_SHAPES}`,
  methodHint: 'the API paths of this relay answer GET only',
};

/** Everything that exists once the store is open. */
interface Running {
  store: RelayStore;
  owned: boolean;
  mirror: FeedMirror;
  sync: UpstreamSync;
  feed: FeedContext;
  offHealth: () => void;
  fair: FairShare;
  products: ProductTracking;
  uses: UsesRoute;
  /** The sweep that drops uses past usesRetentionMs. */
  usesSweep: ReturnType<typeof setInterval>;
  /** The checks of the codes of uses no till read (usedCodeChecks.ts). */
  codeChecks: ReturnType<typeof startUsedCodeChecks>;
}

/** The store as the sync sees it, telling `held` whenever this instance takes or gives up the sync lease. */
function observeLease(store: RelayStore, held: (held: boolean) => void): RelayStore {
  return {
    ...store,
    async acquireLease(name, owner, ttlMs) {
      const lease = await store.acquireLease(name, owner, ttlMs);
      if (lease) held(true);
      return lease;
    },
    async renewLease(lease, ttlMs) {
      const renewed = await store.renewLease(lease, ttlMs);
      if (!renewed) held(false);
      return renewed;
    },
    async releaseLease(lease) {
      held(false);
      await store.releaseLease(lease);
    },
  };
}

/**
 * The shop's name when `shopId` is not given: a SHA-256 prefix of the key (it names the Redis keys and is checked by
 * tills, so every instance of a shop must derive the same).
 * @example defaultShopId('my-key') // '8a1f…' (16 hex digits)
 */
export function defaultShopId(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** How often a relay drops the uses past their retention (any instance may: the drop is idempotent). */
const USES_SWEEP_MS = 60 * 60 * 1000;

/** What a hub gives each shop's relay besides the public options (not part of the public API). */
export interface ShopRelayInternals {
  /** How the shop's records are kept within the hub's memory budget (default: always in memory). */
  holding?: MirrorHolding;
  /**
   * Where refusals are counted (a hub's shop: nowhere, the hub counted them before opening it); default the store's.
   */
  refusals?: RefusalBounds;
}

/**
 * Creates the relay. The key and secret never leave this process; tills get a snapshot and its changes.
 * @example const relay = createShopRelay({ key, secret, basePath: '/shop-api', authorize: (req, route) => isTill(req)
 * });
 * app.use(relay);
 */
export function createShopRelay(raw: ShopRelayOptions): ShopRelay {
  return createHubShopRelay(raw, {});
}

/**
 * createShopRelay with what a hub gives its shops besides the public options (relay/hub; not exported by the package).
 * @example const relay = createHubShopRelay(options, { holding: budget.forShop(shopId) });
 */
export function createHubShopRelay(raw: ShopRelayOptions, internals: ShopRelayInternals): ShopRelay {
  const options = checkRelayOptions(raw);
  const target = (options.target ?? DEFAULT_TARGET).replace(/\/+$/, '');
  const basePath = normalizeBasePath(options.basePath ?? '', 'createShopRelay');
  const now = options.now ?? (() => Date.now());
  const maxWaitSeconds = options.maxWaitSeconds ?? RELAY_DEFAULTS.maxWaitSeconds;
  const shopId = options.shopId ?? defaultShopId(options.key);
  const instance = `${shopId.slice(0, 6)}-${randomBytes(4).toString('hex')}`;
  const limits = options.rateLimits === false ? false : { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
  const auth = { key: options.key, secret: options.secret };
  const fetchFn = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const closing = new AbortController();
  setMaxListeners(0, closing.signal); // every read-through waiting for its turn listens to it
  // everything the relay writes (answers, status, logs) goes without the key, the secret, tokens and passwords
  const redaction = createRedaction([options.key, options.secret, ...urlSecrets(target), ...urlSecrets(options.redis)]);
  const observer = options.observer ?? {};
  // the host's log when it gives one (the relay command's pino), else the console: our words, redacted
  const log: ServerLog = observer.log
    ? (level, message, error) => observer.log!(level, redaction.text(message), error)
    : createServerLog(redaction, 'shop-relay');
  // what this relay's authorize says, route by route (the discovery answer, the feed's coupons)
  const access: AccessOptions = {
    authorize: options.authorize,
    public: options.public,
    component: 'createShopRelay',
    log,
  };
  // refusals are counted in the store once it is open (Redis: one count for every instance), else in this process
  let refusals = internals.refusals;
  const gate = createRequestGate({
    component: 'createShopRelay',
    ...options,
    authorize: discoveryOpen(options.authorize),
    log,
    refusals: () => refusals,
  });
  const polls = createLongPolls(options.maxLongPolls ?? RELAY_DEFAULTS.maxLongPolls);
  // the feed requests under way (long-polls parked among them), to end those whose client is no longer let in
  const feeds = new Set<{ req: IncomingMessage; end(answer: ProxyAnswer): void }>();
  const items = createSingleFlight<ProxyAnswer | undefined>(options.itemCacheMs ?? RELAY_DEFAULTS.itemCacheMs, now);
  let forwarder: ReturnType<typeof createForwarder> | undefined;

  async function start(): Promise<Running> {
    const { store, owned } = await openRelayStore({ store: options.store, redis: options.redis, shopId, now });
    const clientLimits = options.clientLimits;
    if (clientLimits !== false)
      refusals ??= store.refusals?.(clientLimits?.refusedPerMinute ?? CLIENT_LIMITS.refusedPerMinute);
    // the shop-wide limiter, shared fairly between this instance's clients, with a share kept for the listing
    const fair = createFairShare({
      limiter: store.rateLimiter(limits),
      queued: clientLimits === false ? Infinity : (clientLimits?.upstreamQueued ?? CLIENT_LIMITS.upstreamQueued),
      ownShare: options.listingShare ?? RELAY_DEFAULTS.listingShare,
      limits,
      anonymousWaitMs:
        clientLimits === false ? Infinity : (clientLimits?.anonymousWaitMs ?? CLIENT_LIMITS.anonymousWaitMs),
    });
    const limiter = fair.own;
    const sharedToken = storeTokenSlot(store, (token) => redaction.add(token));
    const transport = createTransport({
      baseUrl: target,
      fetch: fetchFn,
      limiter,
      timeoutMs,
      auth,
      signal: closing.signal,
      sharedToken,
      answerBounds: options.maxAnswerBytes,
    });
    const client = createApiClient({ transport, pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE });
    forwarder = createForwarder({
      target,
      ...auth,
      limiter,
      fetch: fetchFn,
      timeoutMs,
      closing: closing.signal,
      sharedToken,
      label: 'relay',
      redaction,
      answerBounds: options.maxAnswerBytes,
    });
    const mirror = createFeedMirror(store, internals.holding);
    mirror.onChange(() => polls.changed());
    const offHealth = observer.storeHealth
      ? store.onHealthChange((health) => observer.storeHealth!(health))
      : () => undefined;
    const sync = createUpstreamSync({
      store: observer.lease ? observeLease(store, observer.lease) : store,
      client,
      owner: instance,
      now,
      refreshIntervalMs: options.refreshIntervalMs ?? RELAY_DEFAULTS.refreshIntervalMs,
      leaseMs: options.leaseMs ?? RELAY_DEFAULTS.leaseMs,
      retry: options.retry ?? SYNC_RETRY,
      onError: (resource, error) => {
        observer.listing?.({
          resource,
          ok: false,
          durationMs: null,
          upserts: 0,
          deletes: 0,
          rejected: 0,
          error: redaction.text(failureText(error)),
        });
        log('warn', `listing ${resource} failed: ${failureText(error)} (${upstreamWhere(target, error)})`);
      },
      onListed: (resource, result) => {
        // confirmedAt is when the listing started (on whichever instance started it)
        const startedAt = result.head.confirmedAt[resource];
        observer.listing?.({
          resource,
          ok: true,
          durationMs: startedAt === undefined ? null : Math.max(0, now() - startedAt),
          upserts: result.upserts,
          deletes: result.deletes,
          rejected: result.rejected,
          error: null,
        });
      },
      productTtlMs: options.productTtlMs ?? RELAY_DEFAULTS.productTtlMs,
      keepProducts: options.products ?? [],
      onDropped: (dropped) => {
        log('warn', `no till asked for products ${dropped.join(', ')} within productTtlMs: they are no longer listed`);
        void mirror.catchUp();
      },
      scrub: (records) => redaction.json(records),
    });
    // the key every instance signs snapshot cursors with: the store's, else one derived from the shop's API secret
    const derived = createHmac('sha256', options.secret).update(`shop-lookup snapshot cursors\u0000${shopId}`).digest();
    const cursors = createSnapshotCursors(() => (store.cursorKey ? store.cursorKey() : Promise.resolve(derived)));
    // read ahead for each history, so snapshots are still served from this copy while the store is away
    mirror.onChange(() => {
      const head = mirror.head();
      if (head) void cursors.prepare(head.handle);
    });
    const feed: FeedContext = {
      shop: shopId,
      store,
      mirror,
      polls,
      chunks: createKeptChunks(store),
      cursors,
      maxWaitSeconds,
      degraded() {
        const health = store.health();
        const error = health.ok ? (mirror.error() ?? sync.lastError()) : health.error;
        return { degraded: error !== null, error: error === null ? null : redaction.text(error) };
      },
    };
    const products = createProductTracking({
      store,
      forward: async (route, client) =>
        (await forwarder!.forward(route, closing.signal, fair.forClient(client))) ?? forwarder!.closedAnswer(),
      added: (added) =>
        void sync.run({ only: added.map((no): ResourceId => `options:${no}`) }).then(() => mirror.catchUp()),
      max: options.maxTrackedProducts ?? RELAY_DEFAULTS.maxTrackedProducts,
      now,
      log,
    });
    const retentionMs = options.usesRetentionMs ?? RELAY_DEFAULTS.usesRetentionMs;
    const maxUses = options.maxUses ?? RELAY_DEFAULTS.maxUses;
    const uses = createUsesRoute({
      store,
      now,
      max: maxUses,
      maxPerTill: options.maxUsesPerTill ?? defaultUsesPerTill(maxUses),
      retentionMs,
      log,
      observe: observer.uses && ((event) => observer.uses!(event)),
    });
    // hourly, or as often as a short retention needs (a minute at most often)
    const usesSweep = setInterval(() => void uses.prune(), Math.min(USES_SWEEP_MS, Math.max(60_000, retentionMs)));
    usesSweep.unref();
    // only when no client waits for the shop API: never ahead of a till's own read
    const codeChecks = startUsedCodeChecks({
      uses,
      client,
      idle: () => fair.waiting() === 0,
      signal: closing.signal,
      log,
    });
    if (options.products?.length) await store.trackProducts(options.products, { at: now() });
    await mirror.catchUp();
    const head = mirror.head();
    if (head) await cursors.prepare(head.handle);
    void sync.run().then(() => mirror.catchUp());
    return { store, owned, mirror, sync, feed, offHealth, fair, products, uses, usesSweep, codeChecks };
  }

  const started = start();
  started.catch(() => undefined); // reported on every request and by `ready`

  async function status(r: Running): Promise<RelayStatus> {
    const head = r.mirror.head();
    const listing = r.sync.listing();
    const { degraded, error } = r.feed.degraded();
    return {
      shop: shopId,
      handle: head?.handle ?? null,
      version: head?.version ?? null,
      products: r.mirror.products(),
      confirmedAt: { ...(head?.confirmedAt ?? {}) } as Record<string, number>,
      listing: listing && { resource: listing.resource, page: listing.page, totalPages: listing.totalPages },
      store: r.store.kind,
      degraded,
      error,
      instance,
      waiting: polls.size(),
      waitingForLister: r.sync.waitingForLister(),
      upstreamWaiting: r.fair.waiting(),
      chunksCompressed: r.feed.chunks.compressed(),
    };
  }

  const degradedHeaders = (r: Running): Record<string, string> =>
    r.feed.degraded().degraded ? { 'x-shop-relay-degraded': 'true' } : {};

  /** One of the six API paths: a listed resource from the snapshot, everything else read through upstream. */
  async function serveApi(
    r: Running,
    route: AllowedRoute,
    client: Client,
    clientGone: AbortSignal,
  ): Promise<ProxyAnswer | undefined> {
    const head = r.mirror.head();
    let resource: ResourceId | null = null;
    if (route.name === 'coupons') resource = 'coupons';
    if (route.name === 'productOptions') resource = `options:${Number(route.path.split('/')[4])}`;
    if (resource && head?.confirmedAt[resource] !== undefined) {
      let records: unknown[];
      try {
        records = await r.mirror.list(resource);
      } catch (error) {
        // a shop not held in memory is listed from the store: away, the API is not asked in its place
        return apiRefusal(
          503,
          'relay_unavailable',
          `RELAY UNAVAILABLE: the relay store could not be read: ${redaction.text(failureText(error))}`,
        );
      }
      return listAnswer(records, route.query, degradedHeaders(r));
    }
    // identical requests share one upstream call (in the turn of the client that asked first); a call still waiting
    // for its turn is given up once every client waiting for it hung up, one already sent finishes (and is kept for
    // later ones when it succeeded)
    // (an issued coupon's answer is shared by the requests under way, never kept after: a till asks it at checkout,
    // and a use the API shows a moment later must not be answered "unused")
    const answer = await items.run(
      `${route.path}${route.query}`,
      async (abandoned) =>
        (await forwarder!.forward(route, closing.signal, r.fair.forClient(client, abandoned))) ??
        (abandoned.aborted ? undefined : forwarder!.closedAnswer()),
      (answer) => answer?.shareable === true && route.name !== 'issuedCoupon',
      clientGone,
    );
    // an issued coupon the API shows used: the uses the tills reported of it are confirmed, and dropped
    if (route.name === 'issuedCoupon') r.uses.read(decodeURIComponent(route.path.split('/')[4]!), answer);
    return answer;
  }

  async function serveRelay(
    r: Running,
    name: RouteName,
    req: IncomingMessage,
    search: string,
    client: Client,
    signal: AbortSignal,
  ) {
    switch (name) {
      case 'discovery': {
        const answer: DiscoveryAnswer = {
          relay: 'shop-lookup',
          protocol: RELAY_PROTOCOL,
          shop: shopId,
          feed: RELAY_PATHS.feed,
          products: RELAY_PATHS.products,
          uses: RELAY_PATHS.uses,
          routes: await allowedRoutes(access, req),
        };
        return jsonAnswer(200, answer);
      }
      case 'status':
        return jsonAnswer(200, await status(r));
      case 'feed': {
        const tag = req.headers['if-none-match'];
        // the feed carries the coupon list only to a client that may list coupons
        const coupons = (await checkAccess(access, req, 'coupons')) === null;
        // a till on the feed is connected: what bounds the times of the uses it sends (tillHeard.ts)
        r.uses.hear(client);
        // a client refused meanwhile (its token revoked: reauthorize) gets its refusal, not what its poll waited for
        const ended = new AbortController();
        let refusal: ProxyAnswer | null = null;
        const feed = {
          req,
          end(answer: ProxyAnswer) {
            refusal = answer;
            ended.abort();
          },
        };
        feeds.add(feed);
        try {
          const either = AbortSignal.any([signal, ended.signal]);
          const answer = await serveFeed(r.feed, search, Array.isArray(tag) ? tag[0] : tag, either, { coupons });
          return refusal ?? answer;
        } finally {
          feeds.delete(feed);
        }
      }
      case 'uses':
        return r.uses.post(req, client);
      default:
        // new products are checked with the API, then listed at once by whichever instance holds the lease
        return req.method === 'POST' ? r.products.post(req, client) : r.products.list();
    }
  }

  const relay = createDoor({
    basePath,
    maxUrlLength: options.maxUrlLength ?? RELAY_DEFAULTS.maxUrlLength,
    gate,
    log,
    closing: closing.signal,
    ...RELAY_SERVED,
    closedAnswer: (format) =>
      format(503, 'relay_closed', 'RELAY CLOSED: this relay has been closed; restart the server.'),
    async ready(format) {
      try {
        await started;
        return null;
      } catch (error) {
        return format(
          503,
          'relay_unavailable',
          `RELAY UNAVAILABLE: the relay could not start: ${redaction.text(failureText(error))}`,
        );
      }
    },
    async serve({ req, name, api, search, client }, clientGone) {
      const r = await started;
      return api ? serveApi(r, api, client, clientGone) : serveRelay(r, name, req, search, client, clientGone);
    },
    // a bug or a store failure mid-request: answered without details (they could hold anything)
    failedAnswer: () => feedError(500, 'server_error', 'The relay failed to answer; see the server log.'),
    cors: options.cors && createCors(options.cors),
  }) as ShopRelay;
  relay.ready = started.then(() => undefined);
  relay.refresh = async ({ due = false }: { due?: boolean } = {}) => {
    const r = await started;
    await r.sync.run(due ? {} : { force: true });
    await r.uses.prune();
    await r.codeChecks.round();
    await r.mirror.catchUp();
  };
  relay.dropUses = async ({ till, codes, by = 'the host (relay.dropUses)' }) => {
    const r = await started;
    const done = await r.uses.drop({ ...(till !== undefined ? { till } : {}), ...(codes ? { codes } : {}) }, by);
    await r.mirror.catchUp();
    return done;
  };
  relay.listUses = async (filter = {}) => (await started).uses.list(filter);
  relay.status = async () => status(await started);
  relay.reauthorize = async () => {
    const format = markedRefusals(feedError, 'feed', 'relay');
    const refused = await Promise.all(
      [...feeds].map(async (feed) => {
        const why = await checkAccess(access, feed.req, 'feed');
        if (why === null || why.status === 500) return 0;
        feed.end(format(why.status, why.status === 401 ? 'unauthorized' : 'forbidden', why.message));
        return 1;
      }),
    );
    return refused.reduce<number>((sum, n) => sum + n, 0);
  };
  let closed: Promise<void> | undefined;
  relay.close = () =>
    (closed ??= (async () => {
      closing.abort(new Error('the relay was closed'));
      polls.close();
      gate.close();
      const r = await started.catch(() => null);
      if (!r) return;
      r.sync.close();
      clearInterval(r.usesSweep);
      r.codeChecks.stop();
      // the run under way ends first: a commit already sent finishes, and the sync lease is released, so another
      // instance lists at once instead of waiting for the lease to run out
      await r.sync.run().catch(() => undefined);
      r.offHealth();
      r.fair.dispose();
      r.mirror.close();
      if (r.owned) await r.store.close();
    })());
  return relay;
}
