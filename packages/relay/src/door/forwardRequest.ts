// Forwarding one allowed GET to the shop API with the server's own token, through the shared rate limiter (in the
// client's turn), renewing the token once when upstream refuses it: the shop API client's one exchange (timeout,
// no redirect followed, the answer read within its route's byte bound) and its throttle pause. Used by the proxy for
// every request and by the relay for single items. A successful answer is passed on redacted; every failure becomes
// our own answer in the API's envelope (the API's code and our fixed words), so the library reads it like any API
// error and nothing an upstream echoed reaches the client.
import {
  ANSWER_BOUNDS,
  answerBound,
  type AnswerBounds,
  apiCodeAnswer,
  bytesText,
  createExchange,
  type Exchanged,
  pauseIfThrottled,
  type RateLimiter,
  readAnswerBody,
  type SharedTokenSlot,
} from '@shop-lookup/shop-api';
import type { AllowedRoute } from './allowedPaths';
import {
  envelopeAnswer,
  jsonAnswer,
  markRefusal,
  PROXY_CODES,
  safeRetryAfter,
  upstreamAnswer,
  type ProxyAnswer,
} from './proxyAnswers';
import { safeOrigin, type Redaction } from './redaction';
import { networkReason } from './upstreamErrors';
import { createUpstreamToken, type TokenFailure } from './upstreamToken';

export interface ForwarderOptions {
  target: string;
  key: string;
  secret: string;
  limiter: RateLimiter;
  fetch: typeof fetch;
  timeoutMs: number;
  /** Aborted when the server closes. */
  closing: AbortSignal;
  /** Where the token is shared between instances (the relay's store); default this process only. */
  sharedToken?: SharedTokenSlot | undefined;
  /** True while upstream is switched off (the demo's "cut the API"). */
  isDown?: () => boolean;
  /** 'proxy' or 'relay', for messages. */
  label: string;
  /** The server's secrets: every token used is added, every answer passed through. */
  redaction: Redaction;
  /** The most bytes an upstream answer may have, decoded, by what was asked; default ANSWER_BOUNDS. */
  answerBounds?: Partial<AnswerBounds> | undefined;
}

export interface Forwarder {
  /**
   * The client's answer; undefined when the client is gone (nobody to answer). `limiter`: whose turn the request
   * waits for (the client's, see fairShare.ts); default the forwarder's own.
   */
  forward(route: AllowedRoute, signal: AbortSignal, limiter?: RateLimiter): Promise<ProxyAnswer | undefined>;
  badGateway(why: string): ProxyAnswer;
  closedAnswer(): ProxyAnswer;
  downAnswer(): ProxyAnswer;
}

/** A client's turn refused (its queue of upstream requests is full, fairShare.ts): 429 with Retry-After. */
function turnRefusal(error: unknown, route: string, by: string): ProxyAnswer | undefined {
  const e = error as { code?: unknown; message?: unknown; retryAfterMs?: unknown } | undefined;
  if (e?.code !== 'too_many_requests' || typeof e.message !== 'string') return undefined;
  const seconds = Math.max(1, Math.ceil((typeof e.retryAfterMs === 'number' ? e.retryAfterMs : 1000) / 1000));
  const answer = envelopeAnswer(429, PROXY_CODES.throttled, e.message, { 'retry-after': String(seconds) });
  return markRefusal(answer, { code: 'too_many_requests', route, by });
}

/** An upstream answer, read: its status, headers and JSON body (undefined when it is not JSON), its envelope's code. */
type Read = Extract<Exchanged, { kind: 'answer' }> & ReturnType<typeof readAnswerBody>;

/** A -2 (or a 401 that is not a permission/credential refusal) means our token is no longer accepted. */
function tokenRefused(result: Read): boolean {
  if (result.code === -2) return true;
  return result.status === 401 && result.code !== -1 && result.code !== -5 && result.code !== -6;
}

/** @example const f = createForwarder({ target, key, secret, limiter, fetch, timeoutMs, closing, label: 'proxy' }); */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const { target, limiter, closing, timeoutMs } = options;
  const bounds: AnswerBounds = { ...ANSWER_BOUNDS, ...options.answerBounds };
  const exchange = createExchange({ baseUrl: target, fetch: options.fetch, timeoutMs, signal: closing });
  const token = createUpstreamToken({
    key: options.key,
    secret: options.secret,
    limiter,
    exchange,
    maxBytes: bounds.auth,
    signal: closing,
    shared: options.sharedToken,
    redaction: options.redaction,
  });
  const where = safeOrigin(target);

  const badGateway = (why: string): ProxyAnswer => envelopeAnswer(502, PROXY_CODES.gateway, `BAD GATEWAY: ${why}`);
  const downAnswer = (): ProxyAnswer =>
    badGateway(
      `the shop API is switched off on this ${options.label} (setUpstreamDown); ` +
        'answers resume when it is switched back on. Local data can still be used.',
    );
  const closedAnswer = (): ProxyAnswer =>
    badGateway(`the shop API ${options.label} has been closed; restart the server.`);

  function failureAnswer(failure: TokenFailure): ProxyAnswer | undefined {
    switch (failure.kind) {
      case 'refused':
        return failure.answer;
      case 'unreachable':
        return badGateway(
          `the shop API at ${where} could not be reached (${networkReason(failure.cause)}). ` +
            "Check the server's network connection and the API status, then try again.",
        );
      case 'redirect':
        // never followed: the server's token (or its key and secret) would go along
        return badGateway(
          `the shop API at ${where} answered with a redirect${failure.status ? ` (HTTP ${failure.status})` : ''}, ` +
            `which this ${options.label} never follows: its target must be the API's own address.`,
        );
      case 'too_big':
        return droppedAnswer(failure.maxBytes);
      case 'timeout':
        return envelopeAnswer(
          504,
          PROXY_CODES.gateway,
          `GATEWAY TIMEOUT: the shop API at ${where} did not answer within ${timeoutMs} ms. Try again later.`,
        );
      case 'aborted':
        return closing.aborted ? closedAnswer() : undefined;
    }
  }

  /**
   * An upstream answer past its bound, dropped unread: 502 in our words naming the bound, marked `failure: { code:
   * 'bad_response', maxBytes }` so an engine reports `bad_response`, not an unreachable API.
   */
  function droppedAnswer(maxBytes: number): ProxyAnswer {
    const msg =
      `BAD GATEWAY: the shop API's answer was longer than ${bytesText(maxBytes)}, the most this ${options.label} ` +
      'reads of such an answer, and was dropped unread. Try again later.';
    return jsonAnswer(502, { msg, code: PROXY_CODES.gateway, data: null, failure: { code: 'bad_response', maxBytes } });
  }

  /** The client's copy of an upstream answer: passed on (redacted) when it succeeded, else our own words. */
  function answerOf(result: Read): ProxyAnswer {
    if (result.json === undefined) {
      // an HTML error page (a gateway's 502), cut-off JSON: never passed on as is, the browser might render it
      const type = result.contentType ? ` (${result.contentType.split(';')[0]!.trim().slice(0, 60)})` : '';
      return badGateway(
        `the shop API answered HTTP ${result.status} with something that is not its JSON envelope${type}. ` +
          'A gateway in front of the API may be failing; try again later.',
      );
    }
    const { code, status } = result;
    if (code !== undefined && code < 0) {
      const wait = safeRetryAfter(result.retryAfter);
      return envelopeAnswer(
        status,
        code,
        apiCodeAnswer(code, status),
        wait === undefined ? {} : { 'retry-after': wait },
      );
    }
    if (code === undefined || status >= 400) {
      return badGateway(
        `the shop API answered HTTP ${status} ${code === undefined ? "without its envelope's code" : `with code ${code}`}. ` +
          'A gateway in front of the API may be failing; try again later.',
      );
    }
    return upstreamAnswer(status, options.redaction.json(result.json), result.retryAfter);
  }

  async function forward(
    route: AllowedRoute,
    signal: AbortSignal,
    turn: RateLimiter = limiter,
  ): Promise<ProxyAnswer | undefined> {
    let renewed = false;
    for (;;) {
      const current = await token.get();
      if (!current.ok) return failureAnswer(current.failure);
      options.redaction.add(current.token); // also one read from the shared slot
      try {
        await turn.acquire(route.cls, 'user', signal);
      } catch (error) {
        const refused = turnRefusal(error, route.name, options.label);
        return refused ?? failureAnswer({ kind: 'aborted', reason: error });
      }
      // The switch may have flipped while this request waited for its slot.
      if (options.isDown?.()) return downAnswer();
      // Only our headers: the client's access-token, cookie and authorization never go upstream.
      const sent = await exchange({
        path: `${route.path}${route.query}`,
        token: current.token,
        signal,
        maxBytes: answerBound(bounds, route.cls),
      });
      if (sent.kind !== 'answer') return failureAnswer(sent);
      const result: Read = { ...sent, ...readAnswerBody(sent.text) };
      // everyone of this class waits, not only this client: the limit is per shop
      pauseIfThrottled(limiter, route.cls, result.status, result.code, result.retryAfter);
      if (!renewed && tokenRefused(result)) {
        await token.invalidate(current.token);
        renewed = true;
        continue;
      }
      return answerOf(result);
    }
  }

  return { forward, badGateway, closedAnswer, downAnswer };
}
