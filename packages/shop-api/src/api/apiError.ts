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
 * 401/403 become `forbidden` (this client is not let through; the API key is not at fault), a 429 `rate_limited`
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
  } else if (status === 401 || status === 403) {
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
 * A 404 whose body is not the API's envelope: the base URL does not lead to the shop API (nor its relay or proxy).
 * @example noApiAt({ method: 'GET', path: '/shop-apii/v2/shop/coupons' }, '/shop-apii')
 */
export function noApiAt(label: { method: string; path: string }, base: string): ApiError {
  return make(
    'unsupported',
    `Nothing at ${base || '(same origin)'} answers as the shop API: ${requestLabel(label.method, label.path, 404)} came back without the API's answer. ` +
      "Check baseUrl: it must lead to the shop API, its relay or its proxy (a path starts with '/').",
    { status: 404 },
  );
}

/**
 * Where requests go, for error messages: the origin of an absolute baseUrl, else the path as given.
 * @example originOf('/shop-api') // '/shop-api'
 */
export function originOf(baseUrl: string): string {
  return /^https?:\/\//.test(baseUrl) ? new URL(baseUrl).origin : baseUrl || '(same origin)';
}

/** The request never got an answer: refused, reset, DNS, offline. */
export function networkError(label: { method: string; path: string }, origin: string, cause: unknown): ApiError {
  const why =
    (cause as { cause?: { code?: string }; message?: string })?.cause?.code ??
    (cause as Error)?.message ??
    String(cause);
  return make(
    'network_error',
    `Could not reach the shop API at ${origin} (${why}). Local data is served; it refreshes when the connection is back. ${requestLabel(label.method, label.path)}`,
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
