// One relay process, as `shop-lookup-relay` (and `npm run relay`) runs it: the relay (or, with SHOPS_FILE, the hub of
// many shops) behind a node:http server with till tokens, the operators' routes, JSON logs with request ids, metrics,
// bounded connections, a reload of its files and secrets (SIGHUP), and a graceful stop: stop accepting, answer parked
// long-polls at once, let a commit under way finish, release the sync lease, close.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShopRelay, defaultShopId } from '../createShopRelay';
import { createMemoryStore } from '../store/memoryStore';
import { createRelayHub } from '../hub/createRelayHub';
import type { RelayHub } from '../hub/hubTypes';
import type { StoreHealth } from '../store/relayStore';
import type { CorsOptions, RelayStatus, RouteName, ShopRelay, UsesEvent } from '../types';
import { createHubAccess, type HubAccess } from './hubAccess';
import { configWarnings } from './configWarnings';
import { guardConnections, serverOptions } from './connectionGuard';
import { createLogBudget, logClient } from './logBudget';
import type { ServerPeers } from './optionalPeers';
import { notReadyReason, opsRouteOf, serveOps, type OpsRoute, type ReadinessInputs } from './opsRoutes';
import { createRelayLogger, type RelayLogger } from './relayLogger';
import { createRelayMetrics } from './relayMetrics';
import { changedSecrets, type RelayServerConfig, type RelayVariableName } from './relayServerConfig';
import { parseShopsFile, type ShopsFileEntry } from './shopsFile';
import { createTillAccess, STOREFRONT_ROUTES, type TillAccess, type TillAccessOptions } from './tillAccess';
import { createTillTokens, parseTokenFile, type TillTokenEntry } from './tillTokens';

/** Why the server could not start, in one line naming what to change. */
export class RelayStartError extends Error {
  constructor(
    readonly code: 'config' | 'port_in_use' | 'listen_failed' | 'store_unreachable' | 'start_failed',
    message: string,
  ) {
    super(message);
    this.name = 'RelayStartError';
  }
}

export interface RelayServerDeps {
  peers: ServerPeers;
  /** The upstream fetch; default globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
  readFile?: (path: string) => string;
  /** Where log lines go; default stdout. */
  logTo?: { write(line: string): void };
}

export interface RelayServer {
  /** 'http://<host>:<port>' (loopback when listening on every address). */
  origin: string;
  port: number;
  /** The relay of the one shop (null in hub mode); a new one once a reload changed the key, secret or REDIS_URL. */
  readonly relay: ShopRelay | null;
  /** Hub mode (SHOPS_FILE): the hub of every shop (else null); a new one once a reload changed REDIS_URL. */
  readonly hub: RelayHub | null;
  log: RelayLogger;
  /**
   * Reads again what may change without a restart (SIGHUP): TILL_TOKENS_FILE, or in hub mode SHOPS_FILE (also when
   * the file changed), and, given `fresh` (the configuration read again), every secret read from a `<NAME>_FILE`: a
   * new TILL_TOKEN_SECRET or OPS_TOKEN applies to the next request (tokens signed with the old secret are refused), a
   * new key, secret or REDIS_URL starts a new relay (or hub) on them and closes the old one (its parked long-polls
   * answered). A file that does not read, or a store that does not open, keeps what was there. Then the feed
   * requests under way whose token no longer checks (parked long-polls) are ended with 401 (reauthorize).
   */
  reload(fresh?: RelayServerConfig): Promise<void>;
  /**
   * Stops gracefully (SIGTERM, SIGINT): resolves with the exit code, 0 when everything ended within
   * SHUTDOWN_TIMEOUT_MS, else 1 (the rest is cut).
   */
  stop(reason: string): Promise<number>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The secrets a new relay (or hub) is made for when a reload changed them: the others apply to the next request. */
const UPSTREAM_SECRETS: readonly RelayVariableName[] = ['SHOP_API_KEY', 'SHOP_API_SECRET', 'REDIS_URL'];

/** The password of a redis:// URL, to keep out of the logs. */
function passwordOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

function readTokens(config: RelayServerConfig, readFile: (path: string) => string): TillTokenEntry[] {
  if (!config.tillTokensFile) return [];
  let text: string;
  try {
    text = readFile(config.tillTokensFile);
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new RelayStartError('config', `TILL_TOKENS_FILE: cannot read ${config.tillTokensFile} (${code})`);
  }
  const parsed = parseTokenFile(text);
  if (!parsed.ok) throw new RelayStartError('config', `TILL_TOKENS_FILE ${config.tillTokensFile}, ${parsed.message}`);
  return parsed.entries;
}

function readShops(file: string, readFile: (path: string) => string): Map<string, ShopsFileEntry> {
  let text: string;
  try {
    text = readFile(file);
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new RelayStartError('config', `SHOPS_FILE: cannot read ${file} (${code})`);
  }
  const parsed = parseShopsFile(text);
  if (!parsed.ok) throw new RelayStartError('config', `SHOPS_FILE ${file}, ${parsed.message}`);
  return parsed.shops;
}

/** The secrets of SHOPS_FILE's shops, kept out of every log line. */
const shopSecrets = (shops: ReadonlyMap<string, ShopsFileEntry>): string[] =>
  [...shops.values()].flatMap((s) => [s.key, s.secret, ...s.tills.map((t) => t.token)]);

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const where = `port ${port} on ${host}`;
      if (error.code === 'EADDRINUSE')
        reject(
          new RelayStartError('port_in_use', `PORT: ${where} is in use: stop the other server or set another PORT`),
        );
      else if (error.code === 'EACCES')
        reject(
          new RelayStartError(
            'listen_failed',
            `PORT: ${where} needs privileges this process lacks: set a PORT above 1023`,
          ),
        );
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
        reject(new RelayStartError('listen_failed', `HOST: ${host} is not an address of this machine`));
      else reject(new RelayStartError('listen_failed', `cannot listen on ${where}: ${error.code ?? error.message}`));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * Starts one relay process; throws a RelayStartError (one line) when it cannot.
 * @example const server = await startRelayServer(config, { peers });
 * process.once('SIGTERM', () => server.stop('SIGTERM').then(process.exit));
 */
export async function startRelayServer(config: RelayServerConfig, deps: RelayServerDeps): Promise<RelayServer> {
  const readFile = deps.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const hubMode = config.shopsFile !== undefined;
  let shops =
    config.shopsFile !== undefined ? readShops(config.shopsFile, readFile) : new Map<string, ShopsFileEntry>();
  const shop = hubMode ? 'hub' : (config.shopId ?? defaultShopId(config.key));
  let entries = readTokens(config, readFile);
  const upstreamTokens = new Set<string>();
  // every secret this process has held, rotated ones too: a line must not show a token just revoked either
  const secrets = new Set<string>();
  const keep = (...values: (string | null | undefined)[]): void => {
    for (const value of values) if (value) secrets.add(value);
  };
  const keepConfigured = (c: RelayServerConfig): void =>
    keep(c.key, c.secret, c.tillTokenSecret, c.opsToken, passwordOf(c.redisUrl));
  keepConfigured(config);
  keep(...entries.map((e) => e.token), ...shopSecrets(shops));
  const log = createRelayLogger(deps.peers.pino, {
    level: config.logLevel,
    secrets: () => [...secrets, ...upstreamTokens],
    bindings: hubMode ? { hub: true } : { shop },
    ...(deps.logTo ? { destination: deps.logTo } : {}),
  });

  const logBudget = createLogBudget({
    perMinute: config.logClientLinesPerMinute,
    onDropped: (client, dropped) =>
      log.warn({ client, dropped, perMinute: config.logClientLinesPerMinute }, 'log lines dropped'),
  });

  let stopping: Promise<number> | null = null;
  let starting: string | null = 'starting';
  let storeError: string | null = null;
  let status: () => Promise<RelayStatus | null> = async () => null;
  const readiness = async (): Promise<ReadinessInputs> => ({
    stopping: stopping !== null,
    starting,
    storeError,
    status: await status(),
    hub: hubMode,
  });
  const server = createServer(serverOptions(config.limits));
  const guard = guardConnections(server, config.limits);
  const metrics = createRelayMetrics(deps.peers.prom, {
    statuses: async () => (hub ? hub.shopStatuses() : [await status()].filter((s): s is RelayStatus => s !== null)),
    byShop: hubMode,
    connections: guard.count,
    ready: async () => notReadyReason(await readiness()) === null,
  });
  // what the relay, or each shop of the hub (named by its id), tells the server: the same metrics and lines in both
  const told = {
    listing(e: Parameters<typeof metrics.observer.listing>[0], shopId?: string): void {
      metrics.observer.listing(e);
      // (a failed listing is the relay's own log line, through `log`)
      if (e.ok)
        log.info(
          {
            ...(shopId ? { shopId } : {}),
            resource: e.resource,
            ms: e.durationMs,
            upserts: e.upserts,
            deletes: e.deletes,
            rejected: e.rejected,
          },
          'listing committed',
        );
    },
    lease(held: boolean, shopId?: string): void {
      metrics.observer.lease(held, shopId);
      log.info({ ...(shopId ? { shopId } : {}), held }, held ? 'sync lease taken' : 'sync lease given up');
    },
    storeHealth(health: StoreHealth): void {
      metrics.observer.storeHealth(health);
      storeError = health.ok ? null : (health.error ?? 'unreachable');
      if (health.ok) log.info('store reachable again');
      else log.error({ error: health.error }, 'store unreachable');
    },
    log: (level: 'warn' | 'error', message: string, error?: unknown): void =>
      error === undefined ? log[level](message) : log[level]({ err: error }, message),
  };
  // the configuration in force: the start's, with the secrets a reload read again
  let current = config;
  const onRefused: TillAccessOptions['onRefused'] = ({ req, route, reason, till }) => {
    // the relay also asks authorize about other routes (the discovery answer lists them, the feed checks
    // coupons): only a refusal of the route asked for is the request's
    if (routes.has(req) && routes.get(req) !== route) return;
    metrics.refused(reason);
    const who = access.identify(req);
    if (logBudget.admit(logClient(who)))
      log.warn({ reqId: requestIds.get(req), route, reason, till, client: who.address }, 'refused');
  };
  let hubAccess: HubAccess | null = null;
  let access!: TillAccess;
  /** Who may ask what, made again when a reload changed the signing secret or OPS_TOKEN. */
  function makeAccess(): void {
    const options = {
      storefrontOpen: current.storefrontOpen,
      public: current.public,
      opsToken: current.opsToken,
      trustProxyHops: current.trustProxyHops,
      onRefused,
    };
    if (hubMode) {
      // each shop checks tokens of its own (a till token of one shop never opens another)
      hubAccess = createHubAccess({ ...options, shops, secret: current.tillTokenSecret, basePath: current.basePath });
      access = hubAccess;
    } else {
      const tokens = createTillTokens({ entries, secret: current.tillTokenSecret, shop });
      access = createTillAccess({ ...options, tokens });
    }
  }
  makeAccess();
  // pages of CORS_ORIGINS use every route their token opens; the routes STOREFRONT_OPEN opens to everybody are
  // readable from any page too (no credentials go with them). A page of any other origin reads nothing (it shows
  // "offline"): each such request is a warning naming its origin, within its client's log budget.
  const unlistedOrigin = (origin: string, req: IncomingMessage): void => {
    const who = access.identify(req);
    if (!logBudget.admit(logClient(who))) return;
    log.warn(
      {
        reqId: requestIds.get(req),
        origin,
        corsOrigins: current.corsOrigins.join(',') || '(none)',
        client: who.address,
      },
      'origin not in CORS_ORIGINS: the browser hides this answer from its page, whose till shows offline; add the origin to CORS_ORIGINS if it is a till page',
    );
  };
  const corsOf = (c: RelayServerConfig): CorsOptions => ({
    origins: c.corsOrigins,
    anyOriginRoutes: c.storefrontOpen ? [...STOREFRONT_ROUTES] : [],
    onUnlistedOrigin: unlistedOrigin,
  });
  const routes = new WeakMap<IncomingMessage, RouteName | OpsRoute>();
  const requestIds = new WeakMap<IncomingMessage, string>();
  const inFlight = new Set<ServerResponse>();
  let relay: ShopRelay | undefined;
  let hub: RelayHub | undefined;
  /** An operator's call on the relay, or (hub mode) on the shop it names. */
  async function onShop<T>(
    shopId: string | null,
    single: (relay: ShopRelay) => Promise<T>,
    many: (hub: RelayHub, shopId: string) => Promise<T>,
  ): Promise<T> {
    if (hub) {
      if (shopId === null) throw new Error('name the shop: ?shop=<id> (or "shop" in the body)');
      return many(hub, shopId);
    }
    if (!relay) throw new Error('the relay is starting');
    if (shopId !== null && shopId !== shop) throw new Error(`no shop "${shopId}" here (this relay serves "${shop}")`);
    return single(relay);
  }

  // the token the relay sends upstream is seen here, so that no log line can ever carry it
  const baseFetch = deps.fetch ?? globalThis.fetch;
  const spyingFetch: typeof fetch = (input, init) => {
    const token = new Headers(init?.headers).get('access-token');
    if (token && !upstreamTokens.has(token)) {
      upstreamTokens.add(token);
      if (upstreamTokens.size > 8) upstreamTokens.delete(upstreamTokens.values().next().value!);
    }
    return baseFetch(input, init);
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const given = req.headers['x-request-id'];
    const reqId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    requestIds.set(req, reqId);
    res.setHeader('x-request-id', reqId);
    // once stopping, every answer closes its connection: the till's next request reaches another instance
    if (stopping) res.setHeader('connection', 'close');
    const started = performance.now();
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      const route = routes.get(req) ?? 'other';
      const status = res.writableFinished ? res.statusCode : 499; // 499: the client left before the answer
      metrics.answered(route, status);
      if (status === 429) metrics.refused('throttled');
      // health probes (a balancer's, every few seconds) are not worth a line at info
      const level = route === 'healthz' || route === 'readyz' ? 'debug' : 'info';
      if (!log.isLevelEnabled(level)) return;
      const who = access.identify(req);
      if (!logBudget.admit(logClient(who))) return;
      log[level](
        {
          reqId,
          method: req.method,
          route,
          status,
          ms: Math.round(performance.now() - started),
          ...(who.till ? { till: who.till } : {}),
        },
        'request',
      );
    });
    const ops = opsRouteOf(req.url);
    if (ops) {
      routes.set(req, ops);
      void serveOps(ops, req, res, {
        readiness,
        mayOperate: (r) => access.operate(r),
        scrape: metrics.scrape,
        who: (r) => access.identify(r).address,
        uses: {
          list: (shopId, filter) =>
            onShop(
              shopId,
              (relay) => relay.listUses(filter),
              (h, id) => h.listUses(id, filter),
            ),
          drop: (shopId, filter, by) =>
            onShop(
              shopId,
              (relay) => relay.dropUses({ ...filter, by }),
              (h, id) => h.dropUses(id, { ...filter, by }),
            ),
        },
      }).catch((error: unknown) => {
        log.error({ err: error }, "an operators' route failed");
        if (!res.headersSent) res.writeHead(500).end();
      });
      return;
    }
    if (guard.isOver(req.socket)) {
      metrics.refused('over_capacity');
      res.writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'retry-after': '5',
        connection: 'close',
      });
      res.end(
        JSON.stringify({
          code: 'relay_busy',
          message: `RELAY BUSY: this relay instance has ${guard.count()} connections open, its limit; try again after Retry-After.`,
        }),
      );
      return;
    }
    if (hub) return hub(req, res);
    if (!relay)
      return void res
        .writeHead(503, { 'retry-after': '1', 'content-type': 'application/json; charset=utf-8' })
        .end('{"code":"relay_starting","message":"RELAY STARTING: try again after Retry-After."}');
    relay(req, res);
  });

  /** The graceful stop of either mode: `close` ends the relay or hub (long-polls answered, leases released). */
  function stopGracefully(
    reason: string,
    close: () => Promise<void>,
    parked: () => Promise<number> = async () => 0,
  ): Promise<number> {
    stopping ??= (async () => {
      const t0 = performance.now();
      log.info({ reason, parked: await parked().catch(() => 0) }, 'shutting down');
      server.close(); // no new connections
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      server.closeIdleConnections();
      const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<'late'>(
        (resolve) => (timer = setTimeout(() => resolve('late'), config.shutdownTimeoutMs)),
      );
      // parked long-polls are answered now; a commit under way finishes; the lease is released; the store closed
      const graceful = (async () => {
        await close();
        server.closeIdleConnections();
        await closed;
      })();
      const outcome = await Promise.race([graceful.then(() => 'done' as const), bound]);
      clearTimeout(timer);
      if (outcome === 'late') {
        log.error(
          { ms: config.shutdownTimeoutMs, connections: guard.count() },
          'shutdown took longer than SHUTDOWN_TIMEOUT_MS: the rest is cut',
        );
        server.closeAllConnections();
        return 1;
      }
      logBudget.report(true);
      logBudget.close();
      log.info({ ms: Math.round(performance.now() - t0) }, 'stopped');
      return 0;
    })();
    return stopping;
  }

  // the port first: a port in use ends the start before anything else began (no listing, no store connection)
  await listen(server, config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // a single relay without Redis keeps its memory store across a reload that makes the relay again
  const memory = hubMode || config.redisUrl ? undefined : createMemoryStore();

  const makeHub = (c: RelayServerConfig): RelayHub =>
    createRelayHub({
      credentials: (id) => {
        const entry = shops.get(id);
        return entry ? { key: entry.key, secret: entry.secret, target: entry.target ?? c.target } : null;
      },
      shops: () => shops.keys(),
      target: c.target,
      basePath: c.basePath,
      ...(c.redisUrl ? { redis: c.redisUrl } : {}),
      maxHotShops: c.maxHotShops,
      maxHotRecords: c.maxHotRecords,
      rateLimits: c.rateLimits,
      refreshIntervalMs: c.refreshIntervalMs,
      usesRetentionMs: c.usesRetentionMs,
      leaseMs: c.leaseMs,
      maxLongPolls: c.limits.maxLongPolls,
      cors: corsOf(c),
      fetch: metrics.observeFetch(spyingFetch),
      authorize: (req, route, shopId) => {
        if (!routes.has(req)) routes.set(req, route);
        return hubAccess!.forShop(shopId).authorize(req, route);
      },
      clientId: (req) => access.clientId(req),
      observer: {
        shop: ({ shopId, kind }) => log.info({ shopId, kind }, `shop ${kind}`),
        listing: ({ shopId, ...e }) => told.listing(e, shopId),
        lease: ({ shopId, held }) => told.lease(held, shopId),
        storeHealth: told.storeHealth,
        log: told.log,
        uses: ({ shopId: _shop, ...e }) => metrics.observer.uses(e as UsesEvent),
      },
    });
  const makeRelay = (c: RelayServerConfig): ShopRelay =>
    createShopRelay({
      key: c.key,
      secret: c.secret,
      target: c.target,
      basePath: c.basePath,
      // the shop's id stays the start's: a key rotated without SHOP_ID must not rename the shop under its tills
      shopId: shop,
      ...(memory ? { store: memory } : { redis: c.redisUrl }),
      products: c.products,
      rateLimits: c.rateLimits,
      refreshIntervalMs: c.refreshIntervalMs,
      usesRetentionMs: c.usesRetentionMs,
      leaseMs: c.leaseMs,
      maxLongPolls: c.limits.maxLongPolls,
      cors: corsOf(c),
      fetch: metrics.observeFetch(spyingFetch),
      authorize: (req, route) => {
        if (!routes.has(req)) routes.set(req, route); // the first route asked is the request's (see onRefused)
        return access.authorize(req, route);
      },
      clientId: (req) => access.clientId(req),
      observer: {
        listing: (e) => told.listing(e),
        lease: (held) => told.lease(held),
        storeHealth: told.storeHealth,
        log: told.log,
        uses: metrics.observer.uses,
      },
    });

  if (hubMode) {
    hub = makeHub(config);
    log.info(
      {
        port,
        host: config.host,
        basePath: config.basePath,
        shops: shops.size,
        store: config.redisUrl ? 'redis' : 'memory',
        pid: process.pid,
      },
      'listening',
    );
  } else {
    relay = makeRelay(config);
    try {
      await relay.ready;
    } catch (error) {
      server.closeAllConnections();
      server.close();
      await relay.close();
      throw new RelayStartError(
        'store_unreachable',
        `the relay could not open its store: ${(error as Error)?.message ?? error}`,
      );
    }
    status = () => relay!.status().catch(() => null);
    const first = await relay.status();
    log.info(
      {
        port,
        host: config.host,
        basePath: config.basePath,
        instance: first.instance,
        store: first.store,
        pid: process.pid,
      },
      'listening',
    );
  }
  starting = null;
  for (const warning of configWarnings(config)) log.warn(warning.fields, warning.message);

  /** TILL_TOKENS_FILE read again: the new list applies to the next request; a bad file keeps the old one. */
  function reloadTills(): void {
    try {
      entries = readTokens(config, readFile);
      keep(...entries.map((e) => e.token));
      makeAccess();
      log.info({ tills: entries.length }, 'till tokens reloaded');
    } catch (error) {
      log.error({ error: (error as Error).message }, 'till tokens not reloaded: the old list stays');
    }
  }

  /**
   * SHOPS_FILE read again: a shop removed or rotated is closed now, the next request makes it with what the file
   * says.
   */
  function reloadShops(): void {
    let fresh: Map<string, ShopsFileEntry>;
    try {
      fresh = readShops(config.shopsFile!, readFile);
    } catch (error) {
      log.error({ error: (error as Error).message }, 'shops not reloaded: the old list stays');
      return;
    }
    const before = shops;
    shops = fresh;
    hubAccess!.replaceShops(fresh);
    keep(...shopSecrets(fresh));
    const changed = [...before].filter(([id, old]) => {
      const now = fresh.get(id);
      return !now || now.key !== old.key || now.secret !== old.secret || now.target !== old.target;
    });
    for (const [id] of changed) void hub!.forget(id);
    const added = [...fresh.keys()].filter((id) => !before.has(id));
    for (const id of added) void hub!.forget(id); // an unknown shop's cached "no such shop" is dropped
    log.info({ shops: fresh.size, changed: changed.map(([id]) => id), added }, 'shops reloaded');
  }

  /**
   * A new relay (or hub) on the new key, secret or Redis URL, serving from the moment its store is open; then the old
   * one is closed (its parked long-polls answered: their tills ask again, of the new one). False: it did not open.
   */
  async function replaceUpstream(c: RelayServerConfig): Promise<boolean> {
    if (hub) {
      const old = hub;
      hub = makeHub(c);
      storeError = null; // the new hub tells its own store's health
      await old.close();
      return true;
    }
    const next = makeRelay(c);
    try {
      await next.ready;
    } catch (error) {
      await next.close();
      log.error(
        { error: (error as Error)?.message ?? String(error) },
        'the relay could not open its store with the new REDIS_URL: the old relay stays',
      );
      return false;
    }
    const old = relay!;
    relay = next;
    storeError = null; // its store just opened
    await old.close();
    return true;
  }

  /** Ends the parked long-polls (and other feed requests) of tokens the reload revoked: 401 now, not data later. */
  async function endRevoked(): Promise<void> {
    // a new access: nothing the last one worked out for a request under way is kept (a token removed, signed with a
    // rotated secret, or expired meanwhile is checked again)
    makeAccess();
    const ended = await (hub ?? relay)?.reauthorize().catch(() => 0);
    if (ended) log.info({ ended }, 'long-polls of revoked tokens ended');
  }

  async function reloadNow(fresh: RelayServerConfig | undefined): Promise<void> {
    if (hubMode) reloadShops();
    else if (config.tillTokensFile) reloadTills();
    if (fresh) await reloadSecrets(fresh);
    await endRevoked();
  }

  async function reloadSecrets(fresh: RelayServerConfig): Promise<void> {
    keepConfigured(fresh);
    const changed = changedSecrets(current, fresh);
    if (changed.length === 0) return;
    let next = fresh;
    let applied = changed;
    if (changed.some((name) => UPSTREAM_SECRETS.includes(name)) && !(await replaceUpstream(fresh))) {
      next = { ...fresh, key: current.key, secret: current.secret, redisUrl: current.redisUrl };
      applied = changed.filter((name) => !UPSTREAM_SECRETS.includes(name));
    }
    current = next;
    if (applied.includes('TILL_TOKEN_SECRET') || applied.includes('OPS_TOKEN')) makeAccess();
    if (applied.length > 0) log.info({ changed: applied }, 'secrets reloaded');
  }
  let reloading = Promise.resolve();

  return {
    origin,
    port,
    get relay() {
      return relay ?? null;
    },
    get hub() {
      return hub ?? null;
    },
    log,
    reload(fresh) {
      // one reload at a time: a second SIGHUP waits for the first
      reloading = reloading
        .then(() => reloadNow(fresh))
        .catch((error: unknown) => log.error({ err: error }, 'reload failed'));
      return reloading;
    },
    stop: (reason) =>
      stopGracefully(
        reason,
        async () => {
          await (hub ?? relay!).close();
          await memory?.close();
        },
        async () => (relay ? (await relay.status()).waiting : 0),
      ),
  };
}
