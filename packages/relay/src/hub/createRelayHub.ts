// The relay for many shops under one mount: `{basePath}/shops/{shopId}/v2/…` and `…/relay/v1/…`. Each shop is a
// createShopRelay of its own (its credentials from the host's function, its Redis keys under its hash tag, its own
// upstream rate limit, token and sync lease), made when first asked for and kept open within `maxHotShops`; the
// least recently asked one beyond is closed and later made again from what its store (Redis) holds. The shops' stores
// share the hub's Redis connections (no connection per shop), and their records are in memory only within
// `maxHotRecords` (recordBudget.ts): the others' snapshot chunks and lists are read straight from Redis. Listings of
// all shops of an instance share `maxConcurrentListings` slots. Every request is heard before its shop is looked up
// (hubHearing.ts): a client's refusals are counted in one place for every shop (and, on Redis, every instance), and
// an unknown shop is answered like a refused known one to whoever may not ask it.
import type { RelayErrorCode } from '@shop-lookup/shop-api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HUB_DEFAULTS, RELAY_DEFAULTS } from '../defaults';
import { normalizeBasePath } from '../door/allowedPaths';
import { createCors } from '../door/cors';
import { corsRouteOf } from '../door/nameRoute';
import { envelopeAnswer, PROXY_CODES, sendAnswer, type ProxyAnswer } from '../door/proxyAnswers';
import { createRedaction, urlSecrets } from '../door/redaction';
import { NO_REFUSAL_BOUNDS, type RefusalBounds } from '../door/refusalBounds';
import { createServerLog, type ServerLog } from '../door/serverLog';
import { createHubShopRelay, RELAY_SERVED } from '../createShopRelay';
import { createHubHearing } from './hubHearing';
import type { MirrorHolding } from '../feed/feedMirror';
import { createRecordBudget } from './recordBudget';
import { checkRelayOptions } from '../relayOptions';
import { feedError } from '../feed/serveFeed';
import { createMemoryStore } from '../store/memory/memoryStore';
import type { RelayStore, StoreHealth } from '../store/relayStore';
import type { RelayStatus, ShopRelay, ShopRelayOptions } from '../types';
import { createHotShops, type HotShop } from './hotShops';
import type { RelayHub, RelayHubOptions, ShopCredentials } from './hubTypes';
import { createListingSlots, gateListings } from './listingSlots';
import { parseShopPath } from './shopPath';
import { createShopSweep } from './shopSweep';
import type { ShopProbe } from '../store/redis/redisShopProbe';

interface Shop {
  relay: ShopRelay;
  store: RelayStore;
  credentials: ShopCredentials;
  checkedAt: number;
  closing: AbortController;
}

/** Where the shops' stores come from: one shared Redis connection, or a memory store each. */
interface StoreSource {
  open(shopId: string): Promise<RelayStore>;
  /** How a shop's records are held: within the record budget on Redis; always (memory stores: nothing to read from). */
  holding(shopId: string): MirrorHolding | undefined;
  /** Whether the shop is due, read without opening it (memory stores: always due). */
  probe(shopId: string): Promise<ShopProbe>;
  /** Refused requests counted per client for every shop (on Redis: for every instance); null: in this process. */
  refusals: RefusalBounds | null;
  close(): Promise<void>;
}

/** Unknown shop ids remembered (so a guesser does not reach the host's `credentials` with every request). */
const MAX_UNKNOWN = 10_000;
/** rate-limiter-flexible's key prefix of the refusals a hub counts per client (every shop, every instance). */
const HUB_REFUSALS = 'shop-lookup:hub:refused';

const HUB_OPTIONS = [
  'credentials',
  'credentialsTtlMs',
  'basePath',
  'redis',
  'authorize',
  'public',
  'maxHotShops',
  'maxHotRecords',
  'maxConcurrentListings',
  'observer',
  'shops',
  'sweepIntervalMs',
];

function checkHubOptions(options: RelayHubOptions): void {
  const wrong: string[] = [];
  if (typeof options?.credentials !== 'function')
    wrong.push('option "credentials" must be a function (shopId) => { key, secret } or null');
  const whole = (name: keyof RelayHubOptions, min: number): void => {
    const v = options[name];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < min))
      wrong.push(`option "${name}" must be a whole number, at least ${min}`);
  };
  whole('credentialsTtlMs', 0);
  whole('maxHotShops', 1);
  whole('maxHotRecords', 0);
  whole('maxConcurrentListings', 1);
  whole('sweepIntervalMs', 1);
  if (options.shops !== undefined && typeof options.shops !== 'function')
    wrong.push('option "shops" must be a function () => shop ids');
  if (options.authorize !== undefined && typeof options.authorize !== 'function')
    wrong.push('option "authorize" must be a function (req, route, shopId)');
  if (wrong.length > 0) throw new TypeError(`createRelayHub: ${wrong.join('; ')}.`);
}

const sameCredentials = (a: ShopCredentials, b: ShopCredentials): boolean =>
  a.key === b.key && a.secret === b.secret && a.target === b.target;

function checkCredentials(shopId: string, value: unknown): ShopCredentials | null {
  if (value === null || value === undefined) return null;
  const c = value as ShopCredentials;
  if (
    typeof c.key !== 'string' ||
    c.key === '' ||
    typeof c.secret !== 'string' ||
    c.secret === '' ||
    (c.target !== undefined && typeof c.target !== 'string')
  ) {
    throw new TypeError(
      `credentials("${shopId}") must give { key, secret, target? } with a non-empty key and secret, or null`,
    );
  }
  return { key: c.key, secret: c.secret, ...(c.target !== undefined ? { target: c.target } : {}) };
}

/**
 * Creates the hub. Shops' keys and secrets never leave this process; tills of a shop get that shop's feed only.
 * @example const hub = createRelayHub({ credentials: (id) => db.credentials(id), redis: process.env.REDIS_URL,
 * authorize: (req, route, id) => tills.allows(req, id) });
 * app.use(hub);
 */
export function createRelayHub(options: RelayHubOptions): RelayHub {
  checkHubOptions(options);
  const basePath = normalizeBasePath(options.basePath ?? '', 'createRelayHub');
  const now = options.now ?? (() => Date.now());
  const ttl = options.credentialsTtlMs ?? HUB_DEFAULTS.credentialsTtlMs;
  const hot = createHotShops<Shop>(options.maxHotShops ?? HUB_DEFAULTS.maxHotShops);
  const budget = createRecordBudget(options.maxHotRecords ?? HUB_DEFAULTS.maxHotRecords);
  const slots = createListingSlots(options.maxConcurrentListings ?? HUB_DEFAULTS.maxConcurrentListings);
  const opening = new Map<string, Promise<HotShop<Shop> | null>>();
  const unknown = new Map<string, number>();
  const retiring = new Set<Promise<void>>();
  const redaction = createRedaction(urlSecrets(options.redis));
  const observer = options.observer ?? {};
  const log: ServerLog = observer.log
    ? (level, message, error) => observer.log!(level, redaction.text(message), error)
    : createServerLog(redaction, 'relay-hub');
  const shared: Partial<ShopRelayOptions> = {};
  for (const [name, value] of Object.entries(options)) {
    if (!HUB_OPTIONS.includes(name) && value !== undefined) (shared as Record<string, unknown>)[name] = value;
  }
  // the shops' own options (and any unknown one) checked now, as createShopRelay would for each shop later
  checkRelayOptions({ ...shared, key: 'checked-per-shop', secret: 'checked-per-shop' }, 'createRelayHub');
  let closed = false;
  const refreshIntervalMs = options.refreshIntervalMs ?? RELAY_DEFAULTS.refreshIntervalMs;
  const cors = options.cors && createCors(options.cors);
  const hearing = createHubHearing({
    ...options,
    now,
    log,
    shared: async () => (await stores()).refusals,
  });

  // the shared store's health as last told (its changes only): the connections every shop uses, or none at all
  let healthy = true;
  const tellHealth = (health: StoreHealth): void => {
    if (health.ok === healthy) return;
    healthy = health.ok;
    observer.storeHealth?.(health);
  };
  let source: Promise<StoreSource> | undefined;
  function stores(): Promise<StoreSource> {
    source ??= (async (): Promise<StoreSource> => {
      if (options.redis === undefined) {
        return {
          open: async () => createMemoryStore({ now }),
          holding: () => undefined,
          probe: async () => ({ due: true, leaseUntil: null }),
          refusals: null,
          close: async () => undefined,
        };
      }
      const [
        { connectSharedRedis },
        { createRedisStore },
        { probeShop },
        { redisKeys, redisPrefix },
        { createRedisRefusals },
      ] = await Promise.all([
        import('../store/redis/sharedRedis'),
        import('../store/redis/redisStore'),
        import('../store/redis/redisShopProbe'),
        import('../store/redis/redisKeys'),
        import('../store/redis/redisRefusals'),
      ]);
      const redis = await connectSharedRedis({ redis: options.redis as string, now });
      redis.onHealthChange(tellHealth);
      tellHealth({ ok: true, error: null, since: now() });
      // Redis back, perhaps without its data: the shops it lost are due now, not at the next sweep (hot shops
      // notice on their own: upstreamSync.ts)
      redis.onReconnect(() => void hub.sweep());
      const perMinute = hearing.perMinute;
      return {
        open: async (shopId) =>
          createRedisStore({
            redis: options.redis as string,
            shopId,
            now,
            connection: await redis.forShop(redisKeys(redisPrefix(shopId)).handle),
          }),
        holding: (shopId) => budget.forShop(shopId),
        probe: (shopId) => probeShop(redis.client, shopId, { refreshIntervalMs, now: now() }),
        refusals:
          perMinute === false
            ? null
            : createRedisRefusals({ client: redis.client, keyPrefix: HUB_REFUSALS, perMinute, now }),
        close: () => redis.close(),
      };
    })();
    source.catch((error: unknown) => {
      source = undefined; // Redis away at start: the next request (or the sweep) tries again
      tellHealth({ ok: false, error: redaction.text((error as Error)?.message ?? String(error)), since: now() });
    });
    return source;
  }

  function retire(entry: HotShop<Shop>, kind: 'close' | 'rotate'): void {
    if (hot.get(entry.shopId) === entry) hot.remove(entry.shopId);
    const shop = entry.value;
    shop.closing.abort(new Error('the shop was closed in this hub'));
    const done = shop.relay
      .close()
      .then(() => shop.store.close())
      .catch((error: unknown) => log('warn', `closing shop ${entry.shopId} failed`, error));
    retiring.add(done);
    void done.finally(() => retiring.delete(done));
    observer.shop?.({ shopId: entry.shopId, kind });
  }

  async function open(shopId: string, credentials: ShopCredentials): Promise<Shop> {
    const source = await stores();
    const store = await source.open(shopId);
    const holding = source.holding(shopId);
    const closing = new AbortController();
    const relay = createHubShopRelay(
      {
        ...shared,
        key: credentials.key,
        secret: credentials.secret,
        ...(credentials.target !== undefined ? { target: credentials.target } : {}),
        shopId,
        basePath: `${basePath}/shops/${shopId}`,
        store: gateListings(store, slots, closing.signal, shopId),
        // the hub heard the request (its verdicts are kept per request) and counted its refusals before opening the
        // shop
        ...(options.authorize ? { authorize: hearing.authorizeFor(shopId) } : { public: options.public === true }),
        observer: {
          log: (level, message, error) => log(level, `shop ${shopId}: ${message}`, error),
          ...(observer.listing ? { listing: (event) => observer.listing!({ ...event, shopId }) } : {}),
          ...(observer.lease ? { lease: (held) => observer.lease!({ shopId, held }) } : {}),
          ...(observer.uses ? { uses: (event) => observer.uses!({ ...event, shopId }) } : {}),
        },
      },
      { ...(holding ? { holding } : {}), refusals: NO_REFUSAL_BOUNDS },
    );
    return { relay, store, credentials, checkedAt: now(), closing };
  }

  async function load(shopId: string): Promise<HotShop<Shop> | null> {
    const current = hot.get(shopId);
    let answer: unknown;
    try {
      answer = await options.credentials(shopId);
    } catch (error) {
      if (!current) throw error;
      // the host's store is away: a hot shop goes on with the credentials it has until the next look
      log('warn', `shop ${shopId}: its credentials could not be read again; serving with the ones it has`, error);
      current.value.checkedAt = now();
      hot.touch(current);
      return current;
    }
    const credentials = checkCredentials(shopId, answer);
    if (current && credentials && sameCredentials(current.value.credentials, credentials)) {
      current.value.checkedAt = now();
      hot.touch(current);
      return current;
    }
    if (current) retire(current, credentials ? 'rotate' : 'close');
    if (!credentials) {
      if (unknown.size >= MAX_UNKNOWN) unknown.delete(unknown.keys().next().value!);
      unknown.set(shopId, now());
      return null;
    }
    unknown.delete(shopId);
    const shop = await open(shopId, credentials);
    const { entry, evicted } = hot.add(shopId, shop);
    for (const old of evicted) retire(old, 'close');
    observer.shop?.({ shopId, kind: 'open' });
    // a shop that could not start (Redis away) is made again by the next request
    shop.relay.ready.catch(() => {
      if (hot.get(shopId) === entry) retire(entry, 'close');
    });
    if (closed) retire(entry, 'close');
    return entry;
  }

  /** The hot shop, made or checked again when its credentials are older than the TTL; null: no such shop. */
  function shopFor(shopId: string): Promise<HotShop<Shop> | null> {
    const entry = hot.get(shopId);
    if (entry && now() - entry.value.checkedAt < ttl) {
      hot.touch(entry);
      return Promise.resolve(entry);
    }
    const missing = unknown.get(shopId);
    if (!entry && missing !== undefined && now() - missing < ttl) return Promise.resolve(null);
    let pending = opening.get(shopId);
    if (!pending) {
      pending = load(shopId).finally(() => opening.delete(shopId));
      opening.set(shopId, pending);
    }
    return pending;
  }

  /**
   * The hot shop with one more request under way on it (the caller ends it with `inFlight--`): opened shops can be
   * evicted by another shop's opening before the caller resumes, so it is taken only while still the hot one.
   */
  async function acquire(shopId: string): Promise<HotShop<Shop> | null> {
    for (let attempt = 0; ; attempt++) {
      const entry = await shopFor(shopId);
      if (!entry || hot.get(shopId) === entry || attempt >= 10) {
        if (entry) entry.inFlight++;
        return entry;
      }
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): Promise<void> {
    const parsed = parseShopPath(req.url ?? '/', basePath);
    if (!parsed) {
      if (next) return next();
      // (readable by a listed origin: a till whose baseUrl misses the mount reads a 404, not a failed request)
      if (cors?.(req, res, undefined)) return;
      return sendAnswer(
        res,
        feedError(
          404,
          'not_found',
          `NOT FOUND: this hub serves ${basePath}/shops/{shopId}/v2/… and ${basePath}/shops/{shopId}/relay/v1/…`,
        ),
      );
    }
    // every answer carries the CORS headers, the hub's own (no such shop, closed, refused) too; a preflight is
    // answered here, before the request is heard (it carries no credentials) and whatever the shop
    if (cors?.(req, res, parsed.ok ? corsRouteOf(RELAY_SERVED, parsed.rest) : undefined)) return;
    const refuse = (
      status: number,
      code: RelayErrorCode,
      message: string,
      headers: Record<string, string> = {},
    ): ProxyAnswer =>
      /^\/relay(?:[/?]|$)/.test(parsed.rest)
        ? feedError(status, code, message, headers)
        : envelopeAnswer(status, PROXY_CODES.path, message, headers);
    if (!parsed.ok) return sendAnswer(res, refuse(404, 'not_found', `NOT FOUND: ${parsed.reason}`));
    if (closed)
      return sendAnswer(
        res,
        refuse(503, 'relay_closed', 'RELAY CLOSED: this hub has been closed; restart the server.'),
      );
    // heard before the shop is looked up: a refusal is the same whether the shop exists or not
    const heard = await hearing.hear(req, parsed.shopId, parsed.rest);
    if (!heard.ok) return sendAnswer(res, heard.answer);
    let entry: HotShop<Shop> | null;
    try {
      entry = await acquire(parsed.shopId);
    } catch (error) {
      log('error', `shop ${parsed.shopId} could not be opened`, error);
      return sendAnswer(
        res,
        refuse(
          503,
          'shop_unavailable',
          'SHOP UNAVAILABLE: this shop could not be opened now (see the server log); try again later.',
          { 'retry-after': '5' },
        ),
      );
    }
    // a shop nobody serves counts as a refusal of whoever may ask it (so ids cannot be tried without bound either)
    if (!entry)
      return sendAnswer(
        res,
        await heard.unknownShop(
          refuse(404, 'unknown_shop', `NO SUCH SHOP: this hub serves no shop "${parsed.shopId}".`),
        ),
      );
    const shop = entry;
    res.once('close', () => {
      shop.inFlight--;
      for (const old of hot.trim()) retire(old, 'close');
    });
    shop.value.relay(req, res, next);
  }

  const hub = ((req, res, next) => {
    handle(req, res, next).catch((error: unknown) => {
      log('error', 'a request failed', error);
      sendAnswer(res, feedError(500, 'server_error', 'The relay failed to answer; see the server log.'));
    });
  }) as RelayHub;

  /** Runs `work` on one shop's relay, holding it hot meanwhile; rejects for a shop the credentials do not know. */
  async function withShop<T>(shopId: string, work: (relay: ShopRelay) => Promise<T>): Promise<T> {
    const entry = await acquire(shopId);
    if (!entry) throw new Error(`createRelayHub: no shop "${shopId}" (its credentials function answered null)`);
    try {
      return await work(entry.value.relay);
    } finally {
      entry.inFlight--;
    }
  }
  hub.refresh = (shopId) => withShop(shopId, (relay) => relay.refresh());
  hub.dropUses = (shopId, filter) => withShop(shopId, (relay) => relay.dropUses(filter));
  hub.listUses = (shopId, filter) => withShop(shopId, (relay) => relay.listUses(filter));
  hub.forget = async (shopId) => {
    unknown.delete(shopId);
    await opening.get(shopId)?.catch(() => null);
    const entry = hot.get(shopId);
    if (entry) retire(entry, 'close');
    await Promise.all([...retiring]);
  };
  /** Lists what is due of one shop, holding it hot meanwhile (the sweep's visit). */
  async function listDue(shopId: string): Promise<void> {
    const entry = await acquire(shopId);
    if (!entry) return;
    try {
      await entry.value.relay.refresh({ due: true });
    } finally {
      entry.inFlight--;
      for (const old of hot.trim()) retire(old, 'close');
    }
  }
  const sweep = options.shops
    ? createShopSweep({
        shops: options.shops,
        probe: async (shopId) => (await stores()).probe(shopId),
        list: listDue,
        workers: options.maxConcurrentListings ?? HUB_DEFAULTS.maxConcurrentListings,
        intervalMs: options.sweepIntervalMs ?? Math.min(refreshIntervalMs, HUB_DEFAULTS.sweepIntervalMs),
        now,
        log,
      })
    : null;
  if (sweep) void sweep.sweep();
  hub.sweep = () => sweep?.sweep() ?? Promise.resolve();
  hub.status = () => ({
    hot: hot.ids(),
    inMemory: budget.held(),
    hotRecords: budget.total(),
    listings: { running: slots.running(), waiting: slots.waiting() },
    watching: sweep?.watching() ?? [],
  });
  hub.shopStatuses = async () =>
    (await Promise.all(hot.all().map((entry) => entry.value.relay.status().catch(() => null)))).filter(
      (s): s is RelayStatus => s !== null,
    );
  hub.reauthorize = async () => {
    hearing.forgetVerdicts();
    const ended = await Promise.all(hot.all().map((entry) => entry.value.relay.reauthorize().catch(() => 0)));
    return ended.reduce((sum, n) => sum + n, 0);
  };
  let closedAll: Promise<void> | undefined;
  hub.close = () =>
    (closedAll ??= (async () => {
      closed = true;
      sweep?.close();
      await Promise.all([...opening.values()].map((p) => p.catch(() => null)));
      for (const entry of hot.all()) retire(entry, 'close');
      await Promise.all([...retiring]);
      if (source) await (await source.catch(() => null))?.close();
    })());
  return hub;
}
