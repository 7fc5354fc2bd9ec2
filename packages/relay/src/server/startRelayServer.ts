// One relay process, as `shop-lookup-relay` (and `npm run relay`) runs it: the relay (or, with SHOPS_FILE, the hub of
// many shops) behind a node:http server with till tokens, the operators' routes, JSON logs with request ids, metrics,
// bounded connections, a reload of its files and secrets (SIGHUP), and a graceful stop. This file starts it in order;
// what changes while it runs is one object (serverState.ts), read and changed by the request handler
// (handleRequest.ts), the reload (reloadServer.ts) and the stop (gracefulStop.ts).
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RelayHub } from '../hub/hubTypes';
import { createMemoryStore } from '../store/memory/memoryStore';
import type { RelayStatus, ShopRelay } from '../types';
import { configWarnings } from './configWarnings';
import { guardConnections, serverOptions } from './connectionGuard';
import { gracefulStop } from './gracefulStop';
import { requestHandler } from './handleRequest';
import { createLogBudget } from './logBudget';
import type { ServerPeers } from './optionalPeers';
import { notReadyReason, type ReadinessInputs } from './opsRoutes';
import { createRelayLogger, type RelayLogger } from './relayLogger';
import { createRelayMetrics } from './relayMetrics';
import type { RelayServerConfig } from './relayServerConfig';
import { RelayStartError } from './relayStartError';
import { reloadServer } from './reloadServer';
import { createServerAccess } from './serverAccess';
import { createServerState } from './serverState';
import { serverUpstream } from './serverUpstream';

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
  const state = createServerState(config, readFile);
  const { hubMode } = state;
  const log = createRelayLogger(deps.peers.pino, {
    level: config.logLevel,
    secrets: state.secrets.all,
    bindings: hubMode ? { hub: true } : { shop: state.shop },
    ...(deps.logTo ? { destination: deps.logTo } : {}),
  });
  const logBudget = createLogBudget({
    perMinute: config.logClientLinesPerMinute,
    onDropped: (client, dropped) =>
      log.warn({ client, dropped, perMinute: config.logClientLinesPerMinute }, 'log lines dropped'),
  });

  // the relay's status once it serves (a hub has none: each shop's own relay/v1/status tells)
  const status = async (): Promise<RelayStatus | null> =>
    state.phase === 'starting' || !state.relay ? null : state.relay.status().catch(() => null);
  const readiness = async (): Promise<ReadinessInputs> => ({
    stopping: state.phase === 'stopping',
    starting: state.phase === 'starting' ? 'starting' : null,
    storeError: state.storeError,
    status: await status(),
    hub: hubMode,
  });
  const server = createServer(serverOptions(config.limits));
  const guard = guardConnections(server, config.limits);
  const metrics = createRelayMetrics(deps.peers.prom, {
    statuses: async () =>
      state.hub ? state.hub.shopStatuses() : [await status()].filter((s): s is RelayStatus => s !== null),
    byShop: hubMode,
    connections: guard.count,
    ready: async () => notReadyReason(await readiness()) === null,
  });
  const access = createServerAccess(state, { log, logBudget, metrics });
  server.on('request', requestHandler(state, { access, guard, metrics, log, logBudget, readiness }));

  // the port first: a port in use ends the start before anything else began (no listing, no store connection)
  await listen(server, config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // a single relay without Redis keeps its memory store across a reload that makes the relay again
  const memory = hubMode || config.redisUrl ? undefined : createMemoryStore();
  const upstream = serverUpstream(state, {
    access,
    metrics,
    log,
    fetch: state.secrets.watchUpstream(deps.fetch ?? globalThis.fetch),
    memory,
  });

  const where = { port, host: config.host, basePath: config.basePath };
  if (hubMode) {
    state.hub = upstream.makeHub(config);
    const store = config.redisUrl ? 'redis' : 'memory';
    log.info({ ...where, shops: state.shops.size, store, pid: process.pid }, 'listening');
  } else {
    const relay = upstream.makeRelay(config);
    state.relay = relay;
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
    const first = await relay.status();
    log.info({ ...where, instance: first.instance, store: first.store, pid: process.pid }, 'listening');
  }
  state.phase = 'serving';
  for (const warning of configWarnings(config)) log.warn(warning.fields, warning.message);

  const reload = reloadServer(state, { start: config, readFile, access, upstream, log });
  const stop = gracefulStop(state, {
    server,
    guard,
    log,
    logBudget,
    timeoutMs: config.shutdownTimeoutMs,
    close: async () => {
      await (state.hub ?? state.relay!).close();
      await memory?.close();
    },
    parked: async () => (state.relay ? (await state.relay.status()).waiting : 0),
  });
  return {
    origin,
    port,
    get relay() {
      return state.relay;
    },
    get hub() {
      return state.hub;
    },
    log,
    reload,
    stop,
  };
}
