// One HTTP exchange with the shop API, the one place a request to it is sent from (the engine's transport, the
// relay's forwarder and its token requests): the token header, a timeout that covers the body too, the caller's
// abort signals, no redirect followed, the body read within a byte bound; what came back, as data: an answer whatever
// its status, or why there was none. Taking the rate-limit slot is the caller's (whose turn it waits in differs); a
// throttle answer pauses its class for everyone (pauseIfThrottled).
import type { RateLimiter, RequestClass } from './rateLimiterTypes';
import { retryAfterMs } from './retryAfter';

export interface ExchangeOptions {
  baseUrl: string;
  fetch: typeof fetch;
  /** The whole exchange, body included: an upstream that trickles its answer is cut off too. */
  timeoutMs: number;
  /** Aborts every exchange (the engine or the server is closing). */
  signal?: AbortSignal | undefined;
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
  /** The most bytes the body may have, decoded (answerBounds.ts); past it the answer is `too_big`, dropped unread. */
  maxBytes: number;
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
  /**
   * A redirect (3xx), never followed: the token, or the key and secret, would travel to wherever it points. `status`
   * 0: a browser's opaque redirect, whose status is not shown. Nothing of it is read (its Location neither).
   */
  | { kind: 'redirect'; status: number }
  /** An answer longer than `maxBytes` (decoded): dropped as soon as it passed the bound. */
  | { kind: 'too_big'; status: number; maxBytes: number }
  /** No answer: refused, reset, DNS, offline. `cause`: what fetch threw. */
  | { kind: 'unreachable'; cause: unknown }
  | { kind: 'timeout' }
  /** The caller's or the exchange's own signal aborted it: `reason` is that signal's. */
  | { kind: 'aborted'; reason: unknown };

export type Exchange = (request: ExchangeRequest) => Promise<Exchanged>;

/**
 * The body as text, or null past `max` bytes. Counted as the chunks arrive, decoded (fetch inflates gzip and br),
 * so a small compressed answer that inflates without end is stopped at the bound, not after.
 */
async function readBounded(res: Response, max: number): Promise<string | null> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      reader.cancel().catch(() => undefined);
      return null;
    }
    parts.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * @example const send = createExchange({ baseUrl, fetch, timeoutMs: 15_000 }); await send({ path: '/v2/shop/coupons',
 * token, maxBytes: ANSWER_BOUNDS.list });
 */
export function createExchange(options: ExchangeOptions): Exchange {
  const base = options.baseUrl.replace(/\/+$/, '');
  return async (request) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (request.token) headers['access-token'] = request.token;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const timeout = AbortSignal.timeout(options.timeoutMs);
    // ends the connection of an answer dropped unread (a redirect's, one past its bound)
    const drop = new AbortController();
    const stops = [request.signal, options.signal].filter((s): s is AbortSignal => s !== undefined);
    const init: RequestInit = {
      method: request.method ?? 'GET',
      headers,
      signal: AbortSignal.any([timeout, drop.signal, ...stops]),
      // a redirect is answered as it came, never followed: nothing (no token, no key) goes to another address
      redirect: 'manual',
    };
    if (request.body !== undefined) init.body = JSON.stringify(request.body);
    try {
      const res = await options.fetch(`${base}${request.path}`, init);
      // 3xx in Node (304 Not Modified is no redirect); in a browser an opaque redirect, status 0
      if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400 && res.status !== 304)) {
        drop.abort();
        return { kind: 'redirect', status: res.status };
      }
      request.onHeaders?.(res.status);
      // a connection dropped mid-body fails here; one stalled or trickling there times out
      const text = await readBounded(res, request.maxBytes);
      if (text === null) {
        drop.abort();
        return { kind: 'too_big', status: res.status, maxBytes: request.maxBytes };
      }
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
