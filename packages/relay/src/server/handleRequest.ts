// Every request a relay process is sent: its request id, its line in the log (within its client's budget) and its
// count in the metrics once answered; the operators' routes (health, readiness, metrics, the uses); 503 past the
// connection cap; everything else to the relay, or the hub, serving now (the state's).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RelayHub } from '../hub/hubTypes';
import type { ShopRelay } from '../types';
import type { ConnectionGuard } from './connectionGuard';
import { logClient, type LogBudget } from './logBudget';
import { opsRouteOf, serveOps, type ReadinessInputs } from './opsRoutes';
import type { RelayLogger } from './relayLogger';
import type { RelayMetrics } from './relayMetrics';
import type { ServerAccess } from './serverAccess';
import type { ServerState } from './serverState';

export interface RequestHandlerDeps {
  access: ServerAccess;
  guard: ConnectionGuard;
  metrics: RelayMetrics;
  log: RelayLogger;
  logBudget: LogBudget;
  readiness(): Promise<ReadinessInputs>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * An operator's call on the relay, or (hub mode) on the shop it names; throws a line the operator reads when there is
 * none such.
 */
async function onShop<T>(
  state: ServerState,
  shopId: string | null,
  single: (relay: ShopRelay) => Promise<T>,
  many: (hub: RelayHub, shopId: string) => Promise<T>,
): Promise<T> {
  if (state.hub) {
    if (shopId === null) throw new Error('name the shop: ?shop=<id> (or "shop" in the body)');
    return many(state.hub, shopId);
  }
  if (!state.relay) throw new Error('the relay is starting');
  if (shopId !== null && shopId !== state.shop)
    throw new Error(`no shop "${shopId}" here (this relay serves "${state.shop}")`);
  return single(state.relay);
}

/** @example server.on('request', requestHandler(state, { access, guard, metrics, log, logBudget, readiness })); */
export function requestHandler(
  state: ServerState,
  deps: RequestHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { access, guard, metrics, log, logBudget, readiness } = deps;
  const { routes, ids, inFlight } = state.requests;

  /** Once the answer has ended (or the client left): its count, and its line at info (health probes at debug). */
  function whenAnswered(req: IncomingMessage, res: ServerResponse, reqId: string): void {
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
      const who = access.now.identify(req);
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
  }

  return (req, res) => {
    const given = req.headers['x-request-id'];
    const reqId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    ids.set(req, reqId);
    res.setHeader('x-request-id', reqId);
    // once stopping, every answer closes its connection: the till's next request reaches another instance
    if (state.phase === 'stopping') res.setHeader('connection', 'close');
    whenAnswered(req, res, reqId);
    const ops = opsRouteOf(req.url);
    if (ops) {
      routes.set(req, ops);
      void serveOps(ops, req, res, {
        readiness,
        mayOperate: (r) => access.now.operate(r),
        scrape: metrics.scrape,
        who: (r) => access.now.identify(r).address,
        uses: {
          list: (shopId, filter) =>
            onShop(
              state,
              shopId,
              (relay) => relay.listUses(filter),
              (h, id) => h.listUses(id, filter),
            ),
          drop: (shopId, filter, by) =>
            onShop(
              state,
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
    if (state.hub) return state.hub(req, res);
    if (!state.relay)
      return void res
        .writeHead(503, { 'retry-after': '1', 'content-type': 'application/json; charset=utf-8' })
        .end('{"code":"relay_starting","message":"RELAY STARTING: try again after Retry-After."}');
    state.relay(req, res);
  };
}
