// One HTTP exchange with the shop API, the one place a request to it is sent from (the engine's transport, the
// relay's forwarder and its token requests): the token header, a timeout that covers the body too, the caller's
// abort signals; what came back, as data: an answer whatever its status, or why there was none. Taking the
// rate-limit slot is the caller's (whose turn it waits in differs); a throttle answer pauses its class for everyone
// (pauseIfThrottled).
import type { RateLimiter, RequestClass } from './rateLimiterTypes';
import { retryAfterMs } from './retryAfter';

export interface ExchangeOptions {
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  /** Aborts every exchange (the engine or the server is closing). */
  signal?: AbortSignal | undefined;
  /** 'manual': a redirect is answered as it came, never followed (a server's token must not travel elsewhere). */
  redirect?: 'follow' | 'manual' | undefined;
}

export interface ExchangeRequest {
  method?: 'GET' | 'POST' | undefined;
  /** The path and its query, user segments already encoded. */
  path: string;
  /** Sent as the `access-token` header. */
  token?: string | null | undefined;
  /** Sent as JSON. */
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** Told the HTTP status as soon as the response headers are in (before the body). */
  onHeaders?: ((status: number) => void) | undefined;
}

/** What one exchange gave. */
export type Exchanged =
  | {
      kind: 'answer';
      status: number;
      /** The body as received. */
      text: string;
      /** The Retry-After header as received (read it with retryAfterMs). */
      retryAfter: string | undefined;
      contentType: string | undefined;
    }
  /** No answer: refused, reset, DNS, offline. `cause`: what fetch threw. */
  | { kind: 'unreachable'; cause: unknown }
  | { kind: 'timeout' }
  /** The caller's or the exchange's own signal aborted it: `reason` is that signal's. */
  | { kind: 'aborted'; reason: unknown };

export type Exchange = (request: ExchangeRequest) => Promise<Exchanged>;

/** @example const send = createExchange({ baseUrl, fetch, timeoutMs: 15_000 }); await send({ path: '/v2/shop/coupons', token }); */
export function createExchange(options: ExchangeOptions): Exchange {
  const base = options.baseUrl.replace(/\/+$/, '');
  return async (request) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (request.token) headers['access-token'] = request.token;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const stops = [request.signal, options.signal].filter((s): s is AbortSignal => s !== undefined);
    const init: RequestInit = { method: request.method ?? 'GET', headers, signal: AbortSignal.any([timeout, ...stops]) };
    if (request.body !== undefined) init.body = JSON.stringify(request.body);
    if (options.redirect !== undefined) init.redirect = options.redirect;
    try {
      const res = await options.fetch(`${base}${request.path}`, init);
      request.onHeaders?.(res.status);
      const text = await res.text(); // a connection dropped mid-body fails here; one stalled there times out
      return {
        kind: 'answer',
        status: res.status,
        text,
        retryAfter: res.headers.get('retry-after') ?? undefined,
        contentType: res.headers.get('content-type') ?? undefined,
      };
    } catch (cause) {
      const stopped = stops.find((s) => s.aborted);
      if (stopped) return { kind: 'aborted', reason: stopped.reason };
      return timeout.aborted ? { kind: 'timeout' } : { kind: 'unreachable', cause };
    }
  };
}

/**
 * A throttle answer (HTTP 429, or the API's code -7 whatever the status) holds back its whole class for its
 * Retry-After (1 s without one): the limit is the shop's, not the request's.
 * @example pauseIfThrottled(limiter, 'list', 429, -7, '2') // the list class waits 2 s
 */
export function pauseIfThrottled(
  limiter: RateLimiter,
  cls: RequestClass,
  status: number,
  apiCode: number | null | undefined,
  retryAfter: string | undefined,
): void {
  if (status === 429 || apiCode === -7) limiter.pause(cls, retryAfterMs(retryAfter) ?? 1000);
}
