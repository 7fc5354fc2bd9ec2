// One relay process, as `shop-lookup-relay` (and `npm run relay`) runs it: the relay (or, with SHOPS_FILE, the hub of
// many shops) behind a node:http server with till tokens, the operators' routes, JSON logs with request ids, metrics, bounded connections, and a graceful stop:
// stop accepting, answer parked long-polls at once, let a commit under way finish, release the sync lease, close.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShopRelay, defaultShopId } from '../createShopRelay';
import { createRelayHub } from '../hub/createRelayHub';
import type { RelayHub } from '../hub/hubTypes';
import type { RelayStatus, RouteName, ShopRelay } from '../types';
import { createHubAccess, type HubAccess } from './hubAccess';
import { guardConnections, serverOptions } from './connectionGuard';
import type { ServerPeers } from './optionalPeers';
import { notReadyReason, opsRouteOf, serveOps, type OpsRoute, type ReadinessInputs } from './opsRoutes';
import { createRelayLogger, type RelayLogger } from './relayLogger';
import { createRelayMetrics } from './relayMetrics';
import type { RelayServerConfig } from './relayServerConfig';
import { parseShopsFile, type ShopsFileEntry } from './shopsFile';
import { createTillAccess, type TillAccess } from './tillAccess';
import { createTillTokens, parseTokenFile, type TillTokenEntry } from './tillTokens';

/** Why the server could not start, in one line naming what to change. */
export class RelayStartError extends Error {
  constructor(readonly code: 'config' | 'port_in_use' | 'listen_failed' | 'store_unreachable' | 'start_failed', message: string) {
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
  /** The relay of the one shop (null in hub mode). */
  relay: ShopRelay | null;
  /** Hub mode (SHOPS_FILE): the hub of every shop (else null). */
  hub: RelayHub | null;
  log: RelayLogger;
  /**
   * Reads TILL_TOKENS_FILE again (SIGHUP), or in hub mode SHOPS_FILE (SIGHUP, or the file changed): a till or a shop
   * added, rotated or removed without a restart; a bad file keeps the old list.
   */
  reloadTokens(): void;
  /**
   * Stops gracefully (SIGTERM, SIGINT): resolves with the exit code, 0 when everything ended within
   * SHUTDOWN_TIMEOUT_MS, else 1 (the rest is cut).
   */
  stop(reason: string): Promise<number>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

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
      if (error.code === 'EADDRINUSE') reject(new RelayStartError('port_in_use', `PORT: ${where} is in use: stop the other server or set another PORT`));
      else if (error.code === 'EACCES') reject(new RelayStartError('listen_failed', `PORT: ${where} needs privileges this process lacks: set a PORT above 1023`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') reject(new RelayStartError('listen_failed', `HOST: ${host} is not an address of this machine`));
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
 * @example const server = await startRelayServer(config, { peers }); process.once('SIGTERM', () => server.stop('SIGTERM').then(process.exit));
 */
export async function startRelayServer(config: RelayServerConfig, deps: RelayServerDeps): Promise<RelayServer> {
  const readFile = deps.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const hubMode = config.shopsFile !== undefined;
  let shops = config.shopsFile !== undefined ? readShops(config.shopsFile, readFile) : new Map<string, ShopsFileEntry>();
  const shop = hubMode ? 'hub' : (config.shopId ?? defaultShopId(config.key));
  const entries = readTokens(config, readFile);
  const tokens = createTillTokens({ entries, secret: config.tillTokenSecret, shop });
  const upstreamTokens = new Set<string>();
  const secrets = [config.key, config.secret, config.tillTokenSecret, config.opsToken, passwordOf(config.redisUrl)];
  let tokenSecrets = [...entries.map((e) => e.token), ...shopSecrets(shops)];
  const log = createRelayLogger(deps.peers.pino, {
    level: config.logLevel,
    secrets: () => [...secrets, ...tokenSecrets, ...upstreamTokens],
    bindings: hubMode ? { hub: true } : { shop },
    ...(deps.logTo ? { destination: deps.logTo } : {}),
  });

  let stopping: Promise<number> | null = null;
  let starting: string | null = 'starting';
  let storeError: string | null = null;
  let status: () => Promise<RelayStatus | null> = async () => null;
  const readiness = async (): Promise<ReadinessInputs> => ({ stopping: stopping !== null, starting, storeError, status: await status(), hub: hubMode });
  const server = createServer(serverOptions(config.limits));
  const guard = guardConnections(server, config.limits);
  const metrics = createRelayMetrics(deps.peers.prom, { status: () => status(), connections: guard.count, ready: async () => notReadyReason(await readiness()) === null });
  const accessOptions = {
    storefrontOpen: config.storefrontOpen,
    public: config.public,
    opsToken: config.opsToken,
    trustProxyHops: config.trustProxyHops,
    onRefused: ({ req, route, reason, till }) => {
      // the relay also asks authorize about other routes (the discovery answer lists them, the feed checks
      // coupons): only a refusal of the route asked for is the request's
      if (routes.has(req) && routes.get(req) !== route) return;
      metrics.refused(reason);
      log.warn({ reqId: requestIds.get(req), route, reason, till, client: access.identify(req).address }, 'refused');
    },
  } satisfies Partial<Parameters<typeof createTillAccess>[0]>;
  // hub mode: each shop checks tokens of its own (a till token of one shop never opens another)
  const hubAccess: HubAccess | null = hubMode
    ? createHubAccess({ ...accessOptions, shops, secret: config.tillTokenSecret, basePath: config.basePath })
    : null;
  const access: TillAccess = hubAccess ?? createTillAccess({ ...accessOptions, tokens });
  const routes = new WeakMap<IncomingMessage, RouteName | OpsRoute>();
  const requestIds = new WeakMap<IncomingMessage, string>();
  const inFlight = new Set<ServerResponse>();
  let relay: ShopRelay | undefined;
  let hub: RelayHub | undefined;

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
      const till = access.identify(req).till;
      log.info({ reqId, method: req.method, route, status, ms: Math.round(performance.now() - started), ...(till ? { till } : {}) }, 'request');
    });
    const ops = opsRouteOf(req.url);
    if (ops) {
      routes.set(req, ops);
      void serveOps(ops, req, res, {
        readiness,
        mayOperate: (r) => access.operate(r),
        scrape: metrics.scrape,
      }).catch((error: unknown) => {
        log.error({ err: error }, 'an operators\' route failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
      return;
    }
    if (guard.isOver(req.socket)) {
      metrics.refused('over_capacity');
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '5', connection: 'close' });
      res.end(JSON.stringify({ code: 'relay_busy', message: `RELAY BUSY: this relay instance has ${guard.count()} connections open, its limit; try again after Retry-After.` }));
      return;
    }
    if (hub) return hub(req, res);
    if (!relay) return void res.writeHead(503, { 'retry-after': '1', 'content-type': 'application/json; charset=utf-8' }).end('{"code":"relay_starting","message":"RELAY STARTING: try again after Retry-After."}');
    relay(req, res);
  });

  /** The graceful stop of either mode: `close` ends the relay or hub (long-polls answered, leases released). */
  function stopGracefully(reason: string, close: () => Promise<void>, parked: () => Promise<number> = async () => 0): Promise<number> {
    stopping ??= (async () => {
      const t0 = performance.now();
      log.info({ reason, parked: await parked().catch(() => 0) }, 'shutting down');
      server.close(); // no new connections
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      server.closeIdleConnections();
      const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), config.shutdownTimeoutMs)));
      // parked long-polls are answered now; a commit under way finishes; the lease is released; the store closed
      const graceful = (async () => {
        await close();
        server.closeIdleConnections();
        await closed;
      })();
      const outcome = await Promise.race([graceful.then(() => 'done' as const), bound]);
      clearTimeout(timer);
      if (outcome === 'late') {
        log.error({ ms: config.shutdownTimeoutMs, connections: guard.count() }, 'shutdown took longer than SHUTDOWN_TIMEOUT_MS: the rest is cut');
        server.closeAllConnections();
        return 1;
      }
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
  if (hubAccess) {
    const current = (): Map<string, ShopsFileEntry> => shops;
    hub = createRelayHub({
      credentials: (id) => {
        const entry = current().get(id);
        return entry ? { key: entry.key, secret: entry.secret, target: entry.target ?? config.target } : null;
      },
      shops: () => current().keys(),
      target: config.target,
      basePath: config.basePath,
      ...(config.redisUrl ? { redis: config.redisUrl } : {}),
      maxHotShops: config.maxHotShops,
      maxHotRecords: config.maxHotRecords,
      rateLimits: config.rateLimits,
      refreshIntervalMs: config.refreshIntervalMs,
      leaseMs: config.leaseMs,
      maxLongPolls: config.limits.maxLongPolls,
      fetch: metrics.observeFetch(spyingFetch),
      authorize: (req, route, shopId) => {
        if (!routes.has(req)) routes.set(req, route);
        return hubAccess.forShop(shopId).authorize(req, route);
      },
      clientId: access.clientId,
      observer: {
        shop: ({ shopId, kind }) => log.info({ shopId, kind }, `shop ${kind}`),
        log: (level, message, error) => (error === undefined ? log[level](message) : log[level]({ err: error }, message)),
      },
    });
    starting = null;
    log.info({ port, host: config.host, basePath: config.basePath, shops: shops.size, store: config.redisUrl ? 'redis' : 'memory' }, 'listening');
    const served = hub;
    return {
      origin,
      port,
      relay: null,
      hub: served,
      log,
      reloadTokens() {
        let fresh: Map<string, ShopsFileEntry>;
        try {
          fresh = readShops(config.shopsFile!, readFile);
        } catch (error) {
          log.error({ error: (error as Error).message }, 'shops not reloaded: the old list stays');
          return;
        }
        const before = shops;
        shops = fresh;
        hubAccess.replaceShops(fresh);
        tokenSecrets = [...new Set([...tokenSecrets, ...shopSecrets(fresh)])];
        // a shop removed or rotated is closed here now; the next request makes it again with what the file says
        const changed = [...before].filter(([id, old]) => {
          const now = fresh.get(id);
          return !now || now.key !== old.key || now.secret !== old.secret || now.target !== old.target;
        });
        for (const [id] of changed) void served.forget(id);
        const added = [...fresh.keys()].filter((id) => !before.has(id));
        for (const id of added) void served.forget(id); // an unknown shop's cached "no such shop" is dropped
        log.info({ shops: fresh.size, changed: changed.map(([id]) => id), added }, 'shops reloaded');
      },
      stop: (reason) => stopGracefully(reason, () => served.close()),
    };
  }
  relay = createShopRelay({
    key: config.key,
    secret: config.secret,
    target: config.target,
    basePath: config.basePath,
    shopId: shop,
    ...(config.redisUrl ? { redis: config.redisUrl } : {}),
    products: config.products,
    rateLimits: config.rateLimits,
    refreshIntervalMs: config.refreshIntervalMs,
    leaseMs: config.leaseMs,
    maxLongPolls: config.limits.maxLongPolls,
    fetch: metrics.observeFetch(spyingFetch),
    authorize: (req, route) => {
      if (!routes.has(req)) routes.set(req, route); // the first route asked is the request's (see onRefused)
      return access.authorize(req, route);
    },
    clientId: access.clientId,
    observer: {
      listing(e) {
        metrics.observer.listing(e);
        // (a failed listing is the relay's own log line, below)
        if (e.ok) log.info({ resource: e.resource, ms: e.durationMs, upserts: e.upserts, deletes: e.deletes, rejected: e.rejected }, 'listing committed');
      },
      lease(held) {
        metrics.observer.lease(held);
        log.info({ held }, held ? 'sync lease taken' : 'sync lease given up');
      },
      storeHealth(health) {
        metrics.observer.storeHealth(health);
        storeError = health.ok ? null : (health.error ?? 'unreachable');
        if (health.ok) log.info('store reachable again');
        else log.error({ error: health.error }, 'store unreachable');
      },
      log: (level, message, error) => (error === undefined ? log[level](message) : log[level]({ err: error }, message)),
    },
  });

  try {
    await relay.ready;
  } catch (error) {
    server.closeAllConnections();
    server.close();
    await relay.close();
    throw new RelayStartError('store_unreachable', `the relay could not open its store: ${(error as Error)?.message ?? error}`);
  }
  starting = null;
  const single = relay;
  status = () => single.status().catch(() => null);
  const first = await relay.status();
  log.info({ port, host: config.host, basePath: config.basePath, instance: first.instance, store: first.store }, 'listening');
  return {
    origin,
    port,
    relay: single,
    hub: null,
    log,
    reloadTokens() {
      try {
        const fresh = readTokens(config, readFile);
        tokens.replaceEntries(fresh);
        // the old tokens stay secrets of the log: a line must not show a token that was just revoked either
        tokenSecrets = [...new Set([...tokenSecrets, ...fresh.map((e) => e.token)])];
        log.info({ tills: fresh.length }, 'till tokens reloaded');
      } catch (error) {
        log.error({ error: (error as Error).message }, 'till tokens not reloaded: the old list stays');
      }
    },
    stop: (reason) => stopGracefully(reason, () => single.close(), async () => (await single.status()).waiting),
  };
}
