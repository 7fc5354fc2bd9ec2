// The mock shop API as MSW request handlers: the same handler, data, paging, errors, rate limits and controls as
// startMockShopApi, answering in-process (jsdom, happy-dom, Node tests) instead of on a port.
import { http, HttpResponse, type HttpHandler } from 'msw';
import { createMockShopApiHandler } from '../createMockShopApiHandler';
import type { MockShopApiHandler, MockShopApiHandlerOptions } from '../types';
import { exchangeWithHandler } from './exchangeWithHandler';

/**
 * Options of createMockShopApiMsw: those of createMockShopApiHandler, plus where the app sends its API calls.
 * @example createMockShopApiMsw({ baseUrl: 'http://localhost/shop-api', rateLimits: false })
 */
export interface MockShopApiMswOptions extends MockShopApiHandlerOptions {
  /**
   * The app's `baseUrl`: the API origin, or a proxy path (relative paths resolve against `location` in jsdom and
   * browsers). Requests under `<baseUrl>/v2/` and `<baseUrl>/relay/` (and `<baseUrl>/__mock/` unless `control: false`)
   * are answered.
   * Default 'https://api.imweb.me'.
   */
  baseUrl?: string;
}

/**
 * The mock and its MSW handlers: `handlers` for `setupServer(...)` / `server.use(...)`, and the controls of
 * `startMockShopApi` (`data`, `upsertCoupon`, `setDown`, `inject`, `requests`, …) that steer what they answer.
 * @example const mock = createMockShopApiMsw(); const server = setupServer(...mock.handlers); mock.upsertCoupon(c);
 */
export interface MockShopApiMsw extends Omit<MockShopApiHandler, 'handler'> {
  /** Request handlers for /v2/auth, the coupon, issued-coupon and product-option endpoints (and /__mock/). */
  handlers: HttpHandler[];
  /** The `baseUrl` the handlers answer under. */
  baseUrl: string;
}

/**
 * Creates the mock shop API as MSW handlers. Every path under `<baseUrl>/v2/` is answered as the real API (and the
 * mock server) would, unknown ones with code -98; a dropped connection (`setDown(true)`, the 'drop' fault) is a
 * network error. Needs `msw` 2 (an optional peer dependency of shop-lookup) and Node.
 * @example const mock = createMockShopApiMsw({ baseUrl: 'https://api.imweb.me' });
 * setupServer(...mock.handlers).listen();
 */
export function createMockShopApiMsw(options: MockShopApiMswOptions = {}): MockShopApiMsw {
  const { baseUrl = 'https://api.imweb.me', ...handlerOptions } = options;
  const mock = createMockShopApiHandler(handlerOptions);
  const base = baseUrl.replace(/\/+$/, '');
  // the path the app's requests carry before /v2/ (e.g. '/shop-api'); the mock sees what a server behind it would
  const prefix = new URL(`${base}/`, 'http://relative.invalid').pathname.replace(/\/$/, '');

  const answer = async ({ request }: { request: Request }): Promise<Response> => {
    const url = new URL(request.url);
    const result = await exchangeWithHandler(
      mock.handler,
      request,
      `${url.pathname.slice(prefix.length)}${url.search}`,
    );
    if (result === 'dropped') return HttpResponse.error();
    return new HttpResponse(new Uint8Array(result.body), { status: result.status, headers: result.headers });
  };

  // `relay/*` too: an engine asks `relay/v1` once to find out whether baseUrl is a relay, and the mock answers it
  // as the mock server does (no such service), so the engine lists the API page by page
  const handlers = [http.all(`${base}/v2/*`, answer), http.all(`${base}/relay/*`, answer)];
  if (handlerOptions.control !== false) handlers.push(http.all(`${base}/__mock/*`, answer));

  // The controls are the handler's own (getters and the `data` setter included), reached through the prototype.
  return Object.create(mock, {
    handlers: { value: handlers, enumerable: true },
    baseUrl: { value: base, enumerable: true },
  }) as MockShopApiMsw;
}
