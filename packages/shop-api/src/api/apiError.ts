// Turning what the API (or the network) did into one error with a stable `code` and a message a person can act on.
import { ShopLookupError } from '../errors';
import type { LookupErrorCode } from '../types';
import { bytesText } from './answerBounds';
import { API_CODES } from './apiCodes';

/** Codes worth another try after a pause: they can heal on their own. */
const TRANSIENT = new Set(['rate_limited', 'server_error', 'maintenance', 'network_error', 'timeout', 'bad_response']);

/** Extra, engine-only facts carried on the error object (not part of the public `LookupError` data). */
export interface ApiErrorExtra {
  status?: number;
  apiCode?: number;
  retryAfterMs?: number;
  cause?: unknown;
}

export type ApiError = ShopLookupError<LookupErrorCode> & {
  retryAfterMs?: number;
  /** An answer past its byte bound: the bound (answerBounds.ts). */
  maxBytes?: number;
  /** A refusal of the shop's own server (relay or proxy): the route it refused (RouteName). */
  refusedRoute?: string;
};

function make(code: LookupErrorCode, message: string, extra: ApiErrorExtra): ApiError {
  const error: ApiError = new ShopLookupError(code, message, extra);
  if (extra.retryAfterMs !== undefined) error.retryAfterMs = extra.retryAfterMs;
  return error;
}

/** `[GET] /v2/shop/coupons: 429 TOO MANY REQUEST`: what was asked and what came back, for logs. */
function requestLabel(method: string, path: string, status?: number, msg?: string): string {
  return `[${method}] ${path}${status === undefined ? '' : `: ${status}`}${msg ? ` ${msg}` : ''}`;
}

/** An answer whose body carried a negative `code` (or a non-2xx status with no usable body code). */
export function apiErrorFromAnswer(
  label: { method: string; path: string },
  status: number,
  apiCode: number | null,
  msg: string,
  retryAfterMs?: number,
): ApiError {
  const known = apiCode === null ? undefined : API_CODES[apiCode];
  const code =
    known?.code ??
    (status === 429 ? 'rate_limited' : status >= 500 ? 'server_error' : status === 404 ? 'not_found' : 'api_error');
  const advice = known?.advice ?? API_CODES[status === 429 ? -7 : status >= 500 ? -19 : -10]!.advice;
  const codeText = apiCode === null ? '' : ` (code ${apiCode})`;
  const message = `${advice}${codeText} ${requestLabel(label.method, label.path, status, msg)}`;
  const extra: ApiErrorExtra = { status };
  if (apiCode !== null) extra.apiCode = apiCode;
  if (retryAfterMs !== undefined) extra.retryAfterMs = retryAfterMs;
  return make(code, message, extra);
}

/** What each route of the relay and the proxy lets a client do, for "does not allow this client to …". */
const ROUTE_WORDS: Record<string, string> = {
  coupons: 'list the coupons',
  coupon: 'read a coupon by its code',
  issuedCoupon: 'read an issued coupon',
  productOptions: "read a product's options",
  productOption: 'read a product option',
  discovery: 'ask the relay what it serves',
  feed: "read the relay's feed (the coupon list and the options)",
  products: 'add products to the shop-wide tracked set',
  status: "read the relay's status",
};

/**
 * A refusal the relay or the proxy marked as its own (`refusal: { code, route, by }` in the body), else null:
 * 401/403 become `forbidden` (this client is not let through; the API key is not at fault: a 401 leads with "The
 * relay refused this till's token:" and the relay's reason, a 403 names the route refused), a 429 `rate_limited`
 * naming the server's bounds, not the API's limit.
 * @example serverRefusal({ method: 'GET', path: '/v2/shop/coupons' }, 403, body, 'FORBIDDEN: ...')
 */
export function serverRefusal(
  label: { method: string; path: string },
  status: number,
  body: unknown,
  msg: string,
  retryAfterMs?: number,
): ApiError | null {
  const mark = (body as { refusal?: { code?: unknown; route?: unknown; by?: unknown } } | null)?.refusal;
  if (!mark || typeof mark.code !== 'string' || typeof mark.route !== 'string') return null;
  const server = mark.by === 'proxy' ? 'proxy' : 'relay';
  const what = ROUTE_WORDS[mark.route] ?? `use ${mark.route}`;
  const asked = requestLabel(label.method, label.path, status, msg);
  let error: ApiError;
  if (status === 429) {
    error = make(
      'rate_limited',
      `The shop's ${server} asks this client to slow down (it is past its bounds for this client); it is retried after the pause it gave. ${asked}`,
      retryAfterMs === undefined ? { status } : { status, retryAfterMs },
    );
  } else if (status === 401) {
    // 401: the server did not take this till's credential, its till token (a wrong, expired, other shop's or missing
    // one): the server's reason first, never the host's authorize
    const reason = msg.replace(/^UNAUTHORIZED:\s*/i, '').trim() || 'it sent no reason.';
    error = make(
      'forbidden',
      `The ${server} refused this till's token: ${/[.!?]$/.test(reason) ? reason : `${reason}.`} The shop's API key is not at fault. ` +
        requestLabel(label.method, label.path, status),
      { status },
    );
  } else if (status === 403) {
    error = make(
      'forbidden',
      `The shop's server (its ${server}) does not allow this client to ${what}. The shop's API key is not at fault: ` +
        `whoever runs the ${server} decides this in its authorize. ${asked}`,
      { status },
    );
  } else return null;
  error.refusedRoute = mark.route;
  return error;
}

/**
 * The base URL as error messages show it: an absolute one without credentials, query or fragment, a path as given.
 * @example shownBase('https://user:pw@relay.example/shop-api?x=1') // 'https://relay.example/shop-api'
 */
export function shownBase(baseUrl: string): string {
  if (!/^https?:\/\//i.test(baseUrl)) return baseUrl;
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * A 404 whose body is not the API's envelope, or a relay's or proxy's "no such service" (`said`): the base URL does
 * not lead to the shop API (nor its relay or proxy).
 * @example noApiAt({ method: 'GET', path: '/shop-apii/v2/shop/coupons' }, '/shop-apii')
 */
export function noApiAt(label: { method: string; path: string }, base: string, said?: string): ApiError {
  const answered = said ? `came back saying ${JSON.stringify(said)}` : "came back without the API's answer";
  return make(
    'unsupported',
    `Nothing at ${base || '(same origin)'} answers as the shop API: ${requestLabel(label.method, label.path, 404)} ${answered}. ` +
      "Check baseUrl: it must lead to the shop API, its relay or its proxy (a path starts with '/').",
    { status: 404 },
  );
}

/**
 * The page (or worker) this engine runs in, by its origin; null outside a browser (Node has no location).
 * Read when an error is made, never at load.
 */
function pageOrigin(): string | null {
  const origin = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  return typeof origin === 'string' && origin !== 'null' ? origin : null;
}

/**
 * Why a browser may fail a request to a base URL on another origin than its page while it is online: the relay does
 * not list the page's origin in CORS_ORIGINS, or the path is not one it serves; '' for a base on the page's origin,
 * a relative one, or outside a browser.
 * @example crossOriginHint('https://relay.example/shop-api') // ' If this browser is online: …' (on another page)
 */
function crossOriginHint(base: string): string {
  const page = pageOrigin();
  if (page === null || !/^https?:\/\//i.test(base) || new URL(base).origin === page) return '';
  return (
    ` If this browser is online, the cause may be across origins: ${base} is on another origin than this page (${page}), ` +
    `so its relay must list ${page} in CORS_ORIGINS (its log warns of origins it does not list), and baseUrl must be a path it serves.`
  );
}

/**
 * The request never got an answer: refused, reset, DNS, offline. `base` is the whole base URL (shownBase); a failed
 * fetch to another origin than the page's (which is what a browser's CORS refusal looks like) says so.
 * @example networkError({ method: 'GET', path: '/relay/v1' }, 'https://relay.example/shop-api', new TypeError('Failed to fetch'))
 */
export function networkError(label: { method: string; path: string }, base: string, cause: unknown): ApiError {
  const why =
    (cause as { cause?: { code?: string }; message?: string })?.cause?.code ??
    (cause as Error)?.message ??
    String(cause);
  // (only a fetch that failed as such: a gateway's answer or a relay with no data reached the server)
  const hint = cause instanceof TypeError ? crossOriginHint(base) : '';
  return make(
    'network_error',
    `Could not reach the shop API at ${base || '(same origin)'} (${why}). Local data is served; it refreshes when the connection is back.${hint} ${requestLabel(label.method, label.path)}`,
    { cause },
  );
}

export function timeoutError(label: { method: string; path: string }, timeoutMs: number): ApiError {
  return make(
    'timeout',
    `The shop API did not answer within ${Math.round(timeoutMs / 100) / 10} s; it is retried later. ${requestLabel(label.method, label.path)}`,
    {},
  );
}

/** An answer arrived but was not the API's JSON envelope (cut off, an HTML error page, garbage). */
export function badResponseError(label: { method: string; path: string }, status: number, what: string): ApiError {
  return make(
    'bad_response',
    `The shop API's answer could not be read: ${what}. A proxy or gateway may be failing; local data is kept and the request is retried later. ${requestLabel(label.method, label.path, status)}`,
    { status },
  );
}

/**
 * An answer longer than its bound (decoded), dropped unread: `bad_response` naming the bound, retried like one.
 * @example tooBigError({ method: 'GET', path: '/v2/shop/coupons' }, 200, 8 * 1024 * 1024)
 */
export function tooBigError(
  label: { method: string; path: string },
  status: number,
  maxBytes: number,
  by = '',
): ApiError {
  const what = `it is longer than ${bytesText(maxBytes)} (the bound of such an answer), so it was dropped unread${by ? ` ${by}` : ''}`;
  const error = badResponseError(label, status, what);
  error.maxBytes = maxBytes;
  return error;
}

/**
 * A redirect, never followed (the token, or the key and secret, would go along to wherever it points): an API error
 * naming the status, never where it pointed. Not retried: the address is wrong, asking again cannot help.
 * @example redirectError({ method: 'GET', path: 'http://api.example/v2/shop/coupons' }, 301)
 */
export function redirectError(label: { method: string; path: string }, status: number): ApiError {
  const answered = status === 0 ? 'a redirect' : `a redirect (HTTP ${status})`;
  return make(
    'api_error',
    `The shop API answered with ${answered}, which is never followed (the token, or key and secret, would go along): ` +
      `set the base URL to the API's own address. ${requestLabel(label.method, label.path, status || undefined)}`,
    status === 0 ? {} : { status },
  );
}

/** Whether waiting and trying again can help. */
export function isTransient(error: unknown): boolean {
  return TRANSIENT.has((error as { code?: string })?.code ?? '');
}
