// Who may ask what in a relay process, made from the state: the till tokens (in hub mode each shop's), OPS_TOKEN,
// STOREFRONT_OPEN, RELAY_PUBLIC; made again when a reload changed them. Refusals and the pages of origins not in
// CORS_ORIGINS are counted and logged here, within each client's log budget.
import type { IncomingMessage } from 'node:http';
import type { CorsOptions } from '../types';
import { createHubAccess, type HubAccess } from './hubAccess';
import { logClient, type LogBudget } from './logBudget';
import type { RelayLogger } from './relayLogger';
import type { RelayMetrics } from './relayMetrics';
import type { RelayServerConfig } from './relayServerConfig';
import type { ServerState } from './serverState';
import { createTillAccess, STOREFRONT_ROUTES, type TillAccess, type TillAccessOptions } from './tillAccess';
import { createTillTokens } from './tillTokens';

export interface ServerAccess {
  /** The access in force (hub mode: the hub's, which asks each shop's). */
  readonly now: TillAccess;
  /** Hub mode: the access of every shop (null otherwise). */
  readonly hub: HubAccess | null;
  /** Made again from the state: nothing the last one worked out for a request under way is kept. */
  remake(): void;
  /** The CORS options of a relay (or hub) made on `config`. */
  cors(config: RelayServerConfig): CorsOptions;
}

export interface ServerAccessDeps {
  log: RelayLogger;
  logBudget: LogBudget;
  metrics: Pick<RelayMetrics, 'refused'>;
}

/** @example const access = createServerAccess(state, { log, logBudget, metrics }); access.now.identify(req); */
export function createServerAccess(state: ServerState, { log, logBudget, metrics }: ServerAccessDeps): ServerAccess {
  const { routes, ids } = state.requests;
  let hub: HubAccess | null = null;
  let now!: TillAccess;

  const onRefused: TillAccessOptions['onRefused'] = ({ req, route, reason, till }) => {
    // the relay also asks authorize about other routes (the discovery answer lists them, the feed checks
    // coupons): only a refusal of the route asked for is the request's
    if (routes.has(req) && routes.get(req) !== route) return;
    metrics.refused(reason);
    const who = now.identify(req);
    if (logBudget.admit(logClient(who)))
      log.warn({ reqId: ids.get(req), route, reason, till, client: who.address }, 'refused');
  };

  function remake(): void {
    const c = state.config;
    const options = {
      storefrontOpen: c.storefrontOpen,
      public: c.public,
      opsToken: c.opsToken,
      trustProxyHops: c.trustProxyHops,
      onRefused,
    };
    if (state.hubMode) {
      // each shop checks tokens of its own (a till token of one shop never opens another)
      hub = createHubAccess({ ...options, shops: state.shops, secret: c.tillTokenSecret, basePath: c.basePath });
      now = hub;
    } else {
      const tokens = createTillTokens({ entries: state.tills, secret: c.tillTokenSecret, shop: state.shop });
      now = createTillAccess({ ...options, tokens });
    }
  }
  remake();

  // pages of CORS_ORIGINS use every route their token opens; the routes STOREFRONT_OPEN opens to everybody are
  // readable from any page too (no credentials go with them). A page of any other origin reads nothing (it shows
  // "offline"): each such request is a warning naming its origin, within its client's log budget.
  const unlistedOrigin = (origin: string, req: IncomingMessage): void => {
    const who = now.identify(req);
    if (!logBudget.admit(logClient(who))) return;
    log.warn(
      {
        reqId: ids.get(req),
        origin,
        corsOrigins: state.config.corsOrigins.join(',') || '(none)',
        client: who.address,
      },
      'origin not in CORS_ORIGINS: the browser hides this answer from its page, whose till shows offline; add the origin to CORS_ORIGINS if it is a till page',
    );
  };

  return {
    get now() {
      return now;
    },
    get hub() {
      return hub;
    },
    remake,
    cors: (c) => ({
      origins: c.corsOrigins,
      anyOriginRoutes: c.storefrontOpen ? [...STOREFRONT_ROUTES] : [],
      onUnlistedOrigin: unlistedOrigin,
    }),
  };
}
