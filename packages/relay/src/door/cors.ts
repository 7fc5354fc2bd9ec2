// Cross-origin answers of the door (the `cors` option): the CORS headers of every answer, refusals and paths not
// served included (a till on another origin must read a 401 as a refusal and a 404 as a wrong baseUrl, not as a
// failed request), and the preflight of the routes the door serves, the feed's long-poll among them
// (`Authorization`, `If-None-Match`); a listed origin's preflight of a path not served is answered too, so that the
// request itself reaches its 404. A listed origin gets itself back with credentials allowed; any origin gets `*`
// without them, on the routes opened to any origin only; every other origin gets no CORS header at all, and is told
// to `onUnlistedOrigin` (its page sees "offline"). The answers depend on the Origin header: `Vary: Origin` on all.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsOptions, RouteName } from './types';

/** A route as the door knows it: its name and the methods it answers. */
export interface CorsRoute {
  name: RouteName;
  methods: readonly string[];
}

/**
 * Sets the CORS headers of the answer to `req` (before anything is written); true when `req` was a preflight, then
 * answered here. `route` undefined: a path the door does not serve (its own answer follows, with the headers; a
 * listed origin's preflight is answered here all the same).
 */
export type Cors = (req: IncomingMessage, res: ServerResponse, route: CorsRoute | undefined) => boolean;

/**
 * What a till sends beyond the safelisted headers: its token, the ETag it holds, a JSON body (POST
 * relay/v1/products).
 */
const REQUEST_HEADERS = 'Authorization, Content-Type, If-None-Match';
/**
 * What a till reads beyond the safelisted headers: the feed's ETag, a pause, the relay's state, the time (its clock).
 */
const EXPOSED_HEADERS = 'ETag, Retry-After, X-Shop-Relay-Degraded, Date';
/** How long a browser may keep a preflight's answer, s (Chromium keeps at most 2 hours). */
const PREFLIGHT_MAX_AGE_S = '600';
/** The methods of a path the door does not serve, for a listed origin's preflight (its request then gets the 404). */
const ANY_SERVED_METHOD = ['GET', 'POST'] as const;

/**
 * Whether a request with this Origin comes from a page of the server's own origin (a browser sends Origin on a
 * same-origin POST too): Sec-Fetch-Site says so, or the Origin's host is the Host asked.
 */
function sameOrigin(req: IncomingMessage, origin: string): boolean {
  if (req.headers['sec-fetch-site'] === 'same-origin') return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/**
 * Whether `value` is an origin as a browser sends it: scheme, host and port, no path, lower case.
 * @example isOrigin('https://till.example') // true; isOrigin('https://till.example/') // false
 */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * @example const cors = createCors({ origins: ['https://till.example'] }); if (cors(req, res, { name: 'feed',
 * methods: ['GET'] })) return;
 */
export function createCors(options: CorsOptions): Cors {
  const listed = new Set(options.origins);
  const anyOrigin = new Set(options.anyOriginRoutes ?? []);
  return (req, res, route) => {
    res.setHeader('vary', 'Origin');
    const origin = req.headers.origin;
    const preflight =
      req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    const allowed =
      origin !== undefined && listed.has(origin) ? origin : route && anyOrigin.has(route.name) ? '*' : null;
    if (allowed === null && origin !== undefined && !sameOrigin(req, origin)) options.onUnlistedOrigin?.(origin, req);
    if (allowed !== null) {
      res.setHeader('access-control-allow-origin', allowed);
      // credentials only ever with the origin named, never with '*'
      if (allowed !== '*') res.setHeader('access-control-allow-credentials', 'true');
      if (!preflight) res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    }
    if (!preflight || (route === undefined && allowed === null)) return false;
    if (allowed !== null) {
      res.setHeader('access-control-allow-methods', (route?.methods ?? ANY_SERVED_METHOD).join(', '));
      res.setHeader('access-control-allow-headers', REQUEST_HEADERS);
      res.setHeader('access-control-max-age', PREFLIGHT_MAX_AGE_S);
    }
    res.writeHead(204, { 'content-length': '0' }).end();
    return true;
  };
}
