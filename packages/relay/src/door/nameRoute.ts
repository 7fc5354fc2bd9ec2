// Which route a request under the mount asks for, or the answer that refuses it as asked (URL too long, a path not
// served, a method not allowed): the door's checks that need nothing but the request, written once for the door
// and for a hub, which names a shop's route before it opens the shop.
import { matchAllowedPath, type AllowedRoute } from './allowedPaths';
import type { CorsRoute } from './cors';
import { apiRefusal, envelopeAnswer, PROXY_CODES, type ProxyAnswer } from './proxyAnswers';
import type { RefusalFormat } from './requestGate';
import type { RouteName } from './types';

/** A server's own routes beside the six API paths, all below one prefix (the relay's `/relay`). */
export interface OwnRoutes {
  /** '/relay': with no basePath, the door claims it besides '/v2'. */
  prefix: string;
  /** By path below the mount: the route's name and the methods it answers. */
  routes: Record<string, { name: RouteName; methods: string[] }>;
  /** What the server serves there, for a "not found" answer: 'the relay serves GET relay/v1, …'. */
  served: string;
  /** The format of the answers on these routes. */
  format: RefusalFormat;
}

/** What a server serves, for naming routes: its own routes and its words about what it refuses. */
export interface ServedRoutes {
  maxUrlLength: number;
  own?: OwnRoutes | undefined;
  /** What a refusal of an API path adds about the server (the relay: its own shapes; the proxy: nothing). */
  pathHint: string;
  /** Why an API path answers GET only, in the server's words. */
  methodHint: string;
}

export type NamedRoute =
  | {
      ok: true;
      name: RouteName;
      /** One of the six API paths, or null for one of the server's own routes. */
      api: AllowedRoute | null;
      /** An own route's query, without '?'. */
      search: string;
      /** How this route's refusals are answered. */
      format: RefusalFormat;
    }
  | { ok: false; answer: ProxyAnswer };

/** True when `path` is below the server's own prefix. */
const underOwn = (own: OwnRoutes | undefined, path: string): boolean =>
  own !== undefined && (path === own.prefix || path.startsWith(`${own.prefix}/`));

/**
 * @param local the URL below the mount; `urlLength` the whole URL's length (basePath and query included).
 * @example nameRoute(served, '/v2/shop/coupons/WELCOME10', 'GET', 40) // { ok: true, name: 'coupon', api: {...}, ... }
 */
export function nameRoute(
  served: ServedRoutes,
  local: string,
  method: string | undefined,
  urlLength: number,
): NamedRoute {
  const { own } = served;
  const q = local.indexOf('?');
  const path = q < 0 ? local : local.slice(0, q);
  const search = q < 0 ? '' : local.slice(q + 1);
  const ownRoute = underOwn(own, path);
  if (urlLength > served.maxUrlLength) {
    const msg = `URI TOO LONG: request URLs are limited to ${served.maxUrlLength} characters`;
    return {
      ok: false,
      answer: ownRoute ? own!.format(414, 'uri_too_long', msg) : envelopeAnswer(414, PROXY_CODES.request, msg),
    };
  }
  if (ownRoute) {
    const known = own!.routes[path];
    if (!known) return { ok: false, answer: own!.format(404, 'not_found', `NOT FOUND: ${own!.served}.`) };
    if (!known.methods.includes(method ?? '')) {
      const msg = `METHOD NOT ALLOWED: ${method ?? '?'} is not allowed here; use ${known.methods.join(' or ')}.`;
      return { ok: false, answer: own!.format(405, 'method_not_allowed', msg, { allow: known.methods.join(', ') }) };
    }
    return { ok: true, name: known.name, api: null, search, format: own!.format };
  }
  const match = matchAllowedPath(local);
  if (!match.ok) {
    // a path refused as malformed is a bad request (-10), not a missing service: an engine reads it so
    const [title, code] =
      match.status === 404 ? ['NO SUCH SERVICE', PROXY_CODES.path] : ['INVALID PATH', PROXY_CODES.request];
    return { ok: false, answer: envelopeAnswer(match.status, code, `${title}: ${match.reason}${served.pathHint}`) };
  }
  if (method !== 'GET') {
    const msg = `NO SUCH METHOD: ${method ?? '?'} is not allowed; ${served.methodHint}`;
    return { ok: false, answer: envelopeAnswer(405, PROXY_CODES.method, msg, { allow: 'GET' }) };
  }
  return { ok: true, name: match.name, api: match, search, format: apiRefusal };
}

/**
 * The route a request under the mount asks for, as the CORS layer sees it (its name and methods: an API path answers
 * GET only), before any other check: a preflight is answered whatever else the request would meet. Undefined: a path
 * not served.
 * @example corsRouteOf(served, '/relay/v1/feed?since=3') // { name: 'feed', methods: ['GET'] }
 */
export function corsRouteOf(served: Pick<ServedRoutes, 'own'>, local: string): CorsRoute | undefined {
  const q = local.indexOf('?');
  const path = q < 0 ? local : local.slice(0, q);
  if (underOwn(served.own, path)) return served.own!.routes[path];
  const match = matchAllowedPath(local);
  return match.ok ? { name: match.name, methods: ['GET'] } : undefined;
}
