// Every hub request is heard before its shop is looked up: its route named from the path (a path or method the relay
// does not serve is answered without opening anything), the client's refusals so far, then the host's authorize for
// the shop the path names. A refusal is thus the same answer, after the same work, whether the shop exists or not,
// and refusals are counted in one place for every shop: the hub's Redis when it has one (every instance shares the
// count), else this process. Verdicts are kept per request, so the shop's own door gets the same answer without
// asking the host again.
import type { IncomingMessage } from 'node:http';
import type { AccessOptions } from '../door/access';
import { CLIENT_LIMITS, RELAY_DEFAULTS } from '../defaults';
import { clientResolver } from '../door/clientIdentity';
import { nameRoute, type ServedRoutes } from '../door/nameRoute';
import type { ProxyAnswer } from '../door/proxyAnswers';
import { createRefusalBounds, NO_REFUSAL_BOUNDS, type RefusalBounds } from '../door/refusalBounds';
import { hearRequest, markedRefusals, tooManyRefused } from '../door/requestGate';
import type { ServerLog } from '../door/serverLog';
import type { Authorize, ClientId, ClientLimits, RouteName } from '../door/types';
import { RELAY_SERVED } from '../createShopRelay';
import { discoveryOpen } from '../routeAccess';
import type { HubAuthorize } from './hubTypes';

export interface HubHearingOptions {
  authorize?: HubAuthorize | undefined;
  public?: boolean | undefined;
  clientId?: ((req: IncomingMessage) => ClientId) | undefined;
  clientLimits?: ClientLimits | false | undefined;
  maxUrlLength?: number | undefined;
  now: () => number;
  log: ServerLog;
  /** The count every instance shares (the hub's Redis), or null: this process counts. */
  shared(): Promise<RefusalBounds | null>;
}

/** Heard: the shop may be looked up (`unknownShop` answers, and counts, a shop nobody serves); else the refusal. */
type HubHeard =
  | { ok: true; unknownShop(answer: ProxyAnswer): Promise<ProxyAnswer> }
  | { ok: false; answer: ProxyAnswer };

export interface HubHearing {
  /** Refusals a client may draw per minute over every shop; false: no bound. */
  perMinute: number | false;
  hear(req: IncomingMessage, shopId: string, rest: string): Promise<HubHeard>;
  /** The host's authorize for one shop, its verdicts kept per request (the shop's door asks it again). */
  authorizeFor(shopId: string): Authorize;
  /** Forgets the verdicts kept so far: the host's authorize is asked afresh (a token was revoked). */
  forgetVerdicts(): void;
}

/**
 * @example const hearing = createHubHearing({ authorize, now, log, shared: async () => redisRefusals }); const heard
 * = await hearing.hear(req, 'shop-1', '/relay/v1');
 */
export function createHubHearing(options: HubHearingOptions): HubHearing {
  const limits = options.clientLimits;
  const perMinute = limits === false ? false : (limits?.refusedPerMinute ?? CLIENT_LIMITS.refusedPerMinute);
  const local = createRefusalBounds(perMinute, options.now);
  const clientOf = clientResolver(options.clientId);
  const served: ServedRoutes = { ...RELAY_SERVED, maxUrlLength: options.maxUrlLength ?? RELAY_DEFAULTS.maxUrlLength };
  let verdicts = new WeakMap<IncomingMessage, Map<RouteName, ReturnType<Authorize>>>();

  function authorizeFor(shopId: string): Authorize {
    const authorize = options.authorize!;
    return (req, route) => {
      let asked = verdicts.get(req);
      if (!asked) verdicts.set(req, (asked = new Map()));
      if (!asked.has(route)) asked.set(route, authorize(req, route, shopId));
      return asked.get(route)!;
    };
  }

  async function refusals(): Promise<RefusalBounds> {
    if (perMinute === false) return NO_REFUSAL_BOUNDS;
    // Redis away: this process counts meanwhile
    return (await options.shared().catch(() => null)) ?? local;
  }

  return {
    perMinute,
    authorizeFor,
    forgetVerdicts() {
      verdicts = new WeakMap();
    },
    async hear(req, shopId, rest) {
      const route = nameRoute(served, rest, req.method, (req.url ?? '/').length);
      if (!route.ok) return { ok: false, answer: route.answer };
      const format = markedRefusals(route.format, route.name, 'relay');
      const bounds = await refusals();
      const access: AccessOptions = {
        authorize: discoveryOpen(options.authorize ? authorizeFor(shopId) : undefined),
        public: options.public,
        component: 'createRelayHub',
        log: options.log,
      };
      const heard = await hearRequest({ access, refusals: bounds }, req, clientOf(req), route.name, format);
      if (!heard.ok) return heard;
      return {
        ok: true,
        async unknownShop(answer) {
          const past = await bounds.refused(heard.client.network ?? heard.client.id);
          return past > 0 ? tooManyRefused(format, past) : answer;
        },
      };
    },
  };
}
