// One request to the shop API: rate limit slot, then the one exchange (exchange.ts: token header, timeout, no
// redirect, the answer's byte bound by what was asked), the envelope, a throttle's pause, and a single token renewal
// on -2. Everything that goes wrong becomes an ApiError with a readable message (see apiError.ts).
import type { ShopAuth } from '../types';
import { ANSWER_BOUNDS } from '../defaults';
import { answerBound, type AnswerBounds } from './answerBounds';
import {
  apiErrorFromAnswer,
  networkError,
  noApiAt,
  redirectError,
  serverRefusal,
  shownBase,
  timeoutError,
  tooBigError,
  type ApiError,
} from './apiError';
import { readEnvelope, type Envelope } from './envelope';
import { createExchange, pauseIfThrottled } from './exchange';
import type { Priority, RateLimiter, RequestClass } from './rateLimiter';
import { retryAfterMs } from './retryAfter';
import { AUTH_PATH, createTokenHolder, readAccessToken, type SharedTokenSlot } from './tokenHolder';

export interface TransportOptions {
  baseUrl: string;
  fetch: typeof fetch;
  limiter: RateLimiter;
  timeoutMs: number;
  auth?: ShopAuth | undefined;
  /** An answer arrived (the API is reachable), whatever it said. */
  onAnswer?: () => void;
  /** No answer: refused, reset, timed out. */
  onUnreachable?: (error: ApiError) => void;
  /** Aborts every request, also token requests (the engine is closing). */
  signal?: AbortSignal;
  /**
   * Where instances share the token fetched with key/secret, besides this transport's memory (see tokenHolder.ts).
   * The relay passes its store's slot, so every instance shares one token.
   */
  sharedToken?: SharedTokenSlot | undefined;
  /** The most bytes an answer may have, decoded, by what was asked; default ANSWER_BOUNDS (defaults.ts). */
  answerBounds?: Partial<AnswerBounds> | undefined;
}

export interface RequestSpec {
  method?: 'GET' | 'POST';
  /** Path with user segments already encoded. */
  path: string;
  query?: Record<string, string | number>;
  body?: unknown;
  cls: RequestClass;
  priority: Priority;
  signal?: AbortSignal | undefined;
  /** Counts requests sent on behalf of one sync report. */
  counter?: { requests: number } | undefined;
  /** Told the HTTP status as soon as the response headers are in (before the body). */
  onHeaders?: ((status: number) => void) | undefined;
}

export interface Answer {
  envelope: Envelope;
  status: number;
  /** What was asked, for error messages: the method and the URL (or path) with the base as given. */
  label: { method: string; path: string };
  /** The body as received (the coupon sync hashes it to recognise an unchanged page). */
  text: string;
}

export interface Transport {
  request(spec: RequestSpec): Promise<Answer>;
}

/**
 * @example const t = createTransport({ baseUrl, fetch, limiter, timeoutMs: 15_000, auth }); await t.request({ path:
 * '/v2/shop/coupons', cls: 'list', priority: 'user' })
 */
export function createTransport(options: TransportOptions): Transport {
  const shown = shownBase(options.baseUrl.replace(/\/+$/, ''));
  const exchange = createExchange({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  });
  const bounds: AnswerBounds = { ...ANSWER_BOUNDS, ...options.answerBounds };

  async function once(
    spec: RequestSpec,
    token: string | null,
    maxBytes = answerBound(bounds, spec.cls),
  ): Promise<Answer> {
    const method = spec.method ?? 'GET';
    // errors name the URL asked (the base as given, then the path): a mistyped baseUrl shows in them
    const label = { method, path: `${shown}${spec.path}` };
    await options.limiter.acquire(spec.cls, spec.priority, spec.signal ?? options.signal);
    const qs = spec.query
      ? `?${new URLSearchParams(Object.entries(spec.query).map(([k, v]): [string, string] => [k, String(v)]))}`
      : '';
    if (spec.counter) spec.counter.requests++;
    const result = await exchange({
      method,
      path: `${spec.path}${qs}`,
      token,
      body: spec.body,
      signal: spec.signal,
      maxBytes,
      onHeaders: spec.onHeaders,
    });
    if (result.kind === 'aborted') throw result.reason;
    if (result.kind === 'timeout' || result.kind === 'unreachable') {
      const error =
        result.kind === 'timeout' ? timeoutError(label, options.timeoutMs) : networkError(label, shown, result.cause);
      options.onUnreachable?.(error);
      throw error;
    }
    // Something answered, nothing to read: a redirect, an answer past its bound, or one our relay or proxy dropped
    // as such (its 502 says so): the API is reachable, not down.
    const dropped = result.kind === 'answer' && result.status === 502 ? droppedBound(result.text) : undefined;
    if (result.kind !== 'answer' || dropped !== undefined) {
      options.onAnswer?.();
      if (result.kind === 'redirect') throw redirectError(label, result.status);
      throw result.kind === 'too_big'
        ? tooBigError(label, result.status, result.maxBytes)
        : tooBigError(label, 502, dropped!, "by the shop's relay or proxy");
    }
    const { status, text } = result;
    // A gateway's 502/503/504 (the credential proxy, a CDN) means the API itself could not be reached: treat it
    // as no answer at all (offline, fewer retries, the reconnect probe), not as an API error.
    if (status === 502 || status === 503 || status === 504) {
      const error = networkError(label, shown, new Error(`the gateway answered HTTP ${status}`));
      options.onUnreachable?.(error);
      throw error;
    }
    options.onAnswer?.();
    let envelope: Envelope;
    try {
      envelope = readEnvelope(text, status, label);
    } catch (error) {
      pauseIfThrottled(options.limiter, spec.cls, status, null, result.retryAfter);
      // a 404 without the API's envelope: nothing at this base answers the API's own paths (a mistyped baseUrl);
      // asking again cannot help
      if (status === 404) throw noApiAt(label, shown);
      throw error;
    }
    // a relay's or proxy's own "no such service" (-98) for an API path: its mount is elsewhere (a mistyped baseUrl)
    if (status === 404 && envelope.code === -98) throw noApiAt(label, shown, envelope.msg);
    // everyone of this class waits out a throttle answer, not only the request that drew it
    pauseIfThrottled(options.limiter, spec.cls, status, envelope.code, result.retryAfter);
    if (envelope.code < 0 || status >= 400) {
      const retryAfter = retryAfterMs(result.retryAfter);
      throw (
        serverRefusal(label, status, envelope.body, envelope.msg, retryAfter) ??
        apiErrorFromAnswer(label, status, envelope.code < 0 ? envelope.code : null, envelope.msg, retryAfter)
      );
    }
    return { envelope, status, text, label };
  }

  const fetchToken = async ({ key, secret }: { key: string; secret: string }): Promise<string> => {
    const { envelope } = await once(
      { method: 'POST', path: AUTH_PATH, body: { key, secret }, cls: 'other', priority: 'user' },
      null,
      bounds.auth,
    );
    const token = readAccessToken(envelope.body);
    if (token === undefined) {
      throw apiErrorFromAnswer({ method: 'POST', path: AUTH_PATH }, 200, null, 'no access_token in the answer');
    }
    return token;
  };
  const { auth } = options;
  // key/secret: a token fetched and renewed here; an accessToken: sent as given; none: a proxy adds the token
  const tokens = auth && 'key' in auth ? createTokenHolder(() => fetchToken(auth), options.sharedToken) : undefined;
  const given = auth && 'accessToken' in auth ? auth.accessToken : null;

  return {
    async request(spec) {
      const token = tokens ? await tokens.get() : given;
      try {
        return await once(spec, token);
      } catch (error) {
        const e = error as ApiError;
        // an expired token is renewed once and the request retried once
        if (e.code !== 'token_invalid' || !tokens || token === null) throw refine(e, auth);
        await tokens.invalidate(token).catch(() => undefined); // a failed shared drop: the slot is read again below
        const renewed = await tokens.get();
        return await once(spec, renewed).catch((again: ApiError) => {
          throw refine(again, auth);
        });
      }
    },
  };
}

/**
 * The bound our relay or proxy names in its 502 for an upstream answer it dropped as too long (`failure: { code:
 * 'bad_response', maxBytes }` beside its envelope), else undefined.
 */
function droppedBound(text: string): number | undefined {
  try {
    const failure = (JSON.parse(text) as { failure?: { code?: unknown; maxBytes?: unknown } } | null)?.failure;
    return failure?.code === 'bad_response' && typeof failure.maxBytes === 'number' ? failure.maxBytes : undefined;
  } catch {
    return undefined;
  }
}

/** Says what to do about a refused token, which depends on where the token came from. */
function refine(error: ApiError, auth: ShopAuth | undefined): ApiError {
  if (error.code !== 'token_invalid') return error;
  error.message +=
    auth === undefined
      ? ' No credentials are configured here: the proxy in front of the API must add a valid token.'
      : 'accessToken' in auth
        ? ' The accessToken given to createShopLookup cannot be renewed here: pass a new one, or key/secret on a server.'
        : ' A new token was fetched and also refused: check the key/secret.';
  return error;
}
