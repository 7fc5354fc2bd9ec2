// Public types of the door (the relay's and the proxy's): route names, authorize, per-client bounds. Types only.
import type { IncomingMessage } from 'node:http';

/**
 * What a request asks for, by name, for `authorize`: the six API paths ('coupons' is the whole coupon list,
 * 'coupon' one coupon by its code, 'issuedCoupon' one issued coupon, 'productOptions' a product's option list,
 * 'productOption' one option) and the relay's own ('discovery', 'feed', 'products', 'status', and 'uses': a till
 * reporting the issued coupons it accepted).
 * @example const storefront: RouteName[] = ['productOptions', 'productOption', 'coupon'];
 */
export type RouteName =
  | 'coupons'
  | 'coupon'
  | 'issuedCoupon'
  | 'productOptions'
  | 'productOption'
  | 'discovery'
  | 'feed'
  | 'products'
  | 'status'
  | 'uses';

/**
 * Decides whether a request may be answered: true yes, false 403, or `{ status: 401 | 403, message }` in your words.
 * May be async (a session lookup). Throwing answers 500 without details.
 * @example const authorize: Authorize = (req, route) => route !== 'coupons' && route !== 'issuedCoupon';
 */
export type Authorize = (
  req: IncomingMessage,
  route: RouteName,
) => boolean | { status: 401 | 403; message: string } | Promise<boolean | { status: 401 | 403; message: string }>;

/**
 * Who a request comes from, as `clientId` names it: a string is an anonymous client (an IP address counts as its
 * network, /24 or /64, so rotating addresses within one buys nothing); `{ id, identified: true }` is a client you
 * know (a till by its token): identified clients have their own share of the upstream budget and never queue behind
 * anonymous ones. Refused requests are counted per network, before the token is looked at (`network`: the address
 * the request came from, such as the one a trusted load balancer forwards; default the connecting address), so a
 * network past `refusedPerMinute` is refused whatever token it sends.
 * @example const who: ClientId = till ? { id: `till:${till}`, identified: true, network: ip } : ip;
 */
export type ClientId = string | { id: string; identified: boolean; network?: string | undefined };

/**
 * Per-client bounds: a client over them is answered 429 with Retry-After, and cannot starve the others.
 * @example { concurrent: 8, queued: 32, perSecond: 20, burst: 60, maxWaitMs: 10_000, upstreamQueued: 4,
 * anonymousWaitMs: 10_000, refusedPerMinute: 10 }
 */
export interface ClientLimits {
  /** Requests of one client handled at once (long-polls included); default 8. @example { concurrent: 4 } */
  concurrent?: number | undefined;
  /** Requests of one client waiting for a turn; beyond that 429 at once; default 32. @example { queued: 8 } */
  queued?: number | undefined;
  /** Sustained requests per second of one client; default 20. @example { perSecond: 5 } */
  perSecond?: number | undefined;
  /** Requests one client may send at once above perSecond; default 60. @example { burst: 20 } */
  burst?: number | undefined;
  /**
   * Longest a request waits in its client's queue before it gets 429, ms; default 10_000.
   * @example { maxWaitMs: 2_000 }
   */
  maxWaitMs?: number | undefined;
  /**
   * Requests of one client waiting for the shop API (its share of the upstream budget, served in turn with the
   * other clients'); one more gets 429 at once; default 4. @example { upstreamQueued: 2 }
   */
  upstreamQueued?: number | undefined;
  /**
   * Longest an anonymous client's request waits for its turn at the shop API, ms; past it the request is answered
   * 429 with Retry-After (identified clients, tills, go first and are not bounded); default 10_000.
   * @example { anonymousWaitMs: 5_000 }
   */
  anonymousWaitMs?: number | undefined;
  /**
   * Refused requests (401/403) one client may draw per minute, at once or spread out; past them it gets 429 with
   * Retry-After before `authorize` is asked; default 10. @example { refusedPerMinute: 5 }
   */
  refusedPerMinute?: number | undefined;
}

/**
 * Cross-origin answers, for browser pages served from another origin than the relay (a till on its own domain).
 * `origins` may use every route their client is let through (their `Authorization` header sent, every answer
 * read, refusals included); `anyOriginRoutes` are readable from a page of any origin, without credentials
 * (`Access-Control-Allow-Origin: *`): routes your `authorize` opens to everybody, such as the storefront's. Other
 * origins get no CORS headers, so their pages cannot read an answer.
 * @example { origins: ['https://till.example'], anyOriginRoutes: ['productOptions', 'productOption', 'coupon'] }
 */
export interface CorsOptions {
  /**
   * Exact origins: scheme, host and port, no path or trailing slash.
   * @example ['https://till.example', 'http://localhost:5173']
   */
  origins: string[];
  /**
   * Routes a page of any origin may read (public data only: no credentials go with them).
   * @example ['productOptions', 'productOption', 'coupon']
   */
  anyOriginRoutes?: RouteName[] | undefined;
  /**
   * Told about each request from a page of an origin not in `origins` (its answer carries no CORS headers, so the
   * browser hides it from the page, which shows it as a failed request: "offline"); never for a same-origin request
   * or a route of `anyOriginRoutes`. The relay command logs a warning naming the origin.
   * @example { origins, onUnlistedOrigin: (origin) => log.warn({ origin }, 'origin not in CORS_ORIGINS') }
   */
  onUnlistedOrigin?: ((origin: string, req: IncomingMessage) => void) | undefined;
}
