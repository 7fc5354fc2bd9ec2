// Public types of the credential proxy (createShopApiProxy): its options, which are the door's, and the handler.
// Types only.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authorize, ClientId, ClientLimits } from './door/types';

/**
 * Options of createShopApiProxy. The key and secret stay on the server: the browser only ever talks to the proxy.
 * @example createShopApiProxy({ key: process.env.SHOP_API_KEY!, secret: process.env.SHOP_API_SECRET!, basePath:
 * '/shop-api' })
 */
export interface ShopApiProxyOptions {
  /** The shop's admin API key (server side only). @example { key: process.env.SHOP_API_KEY! } */
  key: string;
  /** The shop's admin API secret (server side only). @example { secret: process.env.SHOP_API_SECRET! } */
  secret: string;
  /** Upstream origin; default 'https://api.imweb.me'. @example { target: 'http://127.0.0.1:8787' } */
  target?: string | undefined;
  /**
   * Mount prefix to strip; default ''. '/shop-api/v2/shop/coupons' → '/v2/shop/coupons'. Requests outside it go to
   * `next()` (or get 404). With no basePath the proxy claims only '/v2' and '/v2/…'.
   * @example { basePath: '/shop-api' }
   */
  basePath?: string | undefined;
  /**
   * Timeout of each upstream request (not counting the rate-limit wait), ms; default 15_000.
   * @example { timeoutMs: 5_000 }
   */
  timeoutMs?: number | undefined;
  /**
   * The most bytes one upstream answer may have, decoded (a gzip or br answer counts as it inflates), by what was
   * asked; a longer one is dropped unread (`bad_response` naming the bound; a client gets 502). Default
   * { list: 8 MiB, item: 1 MiB } (a list page is at most 100 records; a /v2/auth answer may have 64 KiB).
   * @example { maxAnswerBytes: { list: 32 * 1024 * 1024 } }
   */
  maxAnswerBytes?: { list?: number; item?: number };
  /**
   * Requests per second to the shop API, shared by every terminal served by this proxy instance;
   * default { list: 1, other: 5 } (the API's documented limits). false = no limit.
   * @example { rateLimits: { list: 1, other: 5 } }
   */
  rateLimits?: { list?: number; other?: number } | false | undefined;
  /**
   * Longest accepted request URL (req.url, with basePath and query); default 2048, longer gets 414.
   * @example { maxUrlLength: 1024 }
   */
  maxUrlLength?: number | undefined;
  /**
   * The fetch used for upstream calls; default globalThis.fetch, read when the proxy is created.
   * @example { fetch: undiciFetch }
   */
  fetch?: typeof fetch | undefined;
  /**
   * Decides per request who may ask what (see Authorize). Without authorize and without `public: true` every
   * request is answered 401: a server piece answers only whom its host authorises.
   * @example { authorize: (req) => req.headers.cookie?.includes('session=') === true }
   */
  authorize?: Authorize | undefined;
  /** true: anybody who reaches the proxy may ask (a dev server, a private network). @example { public: true } */
  public?: boolean | undefined;
  /**
   * Who a request comes from, for clientLimits and upstream turns; default the remote address (an address counts as
   * its network, /24 or /64; `{ id, identified: true }`: a client you know, whose reads go ahead of anonymous ones).
   * @example { clientId: (req) => ({ id: String(req.headers['x-till']), identified: true }) }
   */
  clientId?: ((req: IncomingMessage) => ClientId) | undefined;
  /** Per-client bounds (429 with Retry-After beyond them); false: none. @example { clientLimits: { concurrent: 4 } } */
  clientLimits?: ClientLimits | false | undefined;
}

/**
 * The proxy: a node:http / connect / Express / Vite middleware plus two switches.
 * @example const proxy = createShopApiProxy({ key, secret }); http.createServer(proxy).listen(8080);
 */
export interface ShopApiProxy {
  /**
   * node:http / connect / Express / Vite dev-server middleware. With `next`, requests outside basePath go to next();
   * without, they get 404.
   * @example viteServer.middlewares.use(proxy);
   */
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /**
   * Simulate losing the API (the demo's "cut the API" switch): while down, every allowed request is answered 502
   * as if upstream were unreachable; refused requests are still refused.
   * @example proxy.setUpstreamDown(true);
   */
  setUpstreamDown(down: boolean): void;
  /**
   * Stops timers and aborts queued/in-flight upstream requests; later requests get 502.
   * @example server.on('close', () => proxy.close());
   */
  close(): void;
}
