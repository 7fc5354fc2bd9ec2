// The server's access token: the one token holder (shop-api's tokenHolder.ts) over the one /v2/auth exchange,
// whose failures come back as data the client gets as its answer.
import {
  apiCodeAnswer,
  AUTH_PATH,
  createTokenHolder,
  type Exchange,
  type Exchanged,
  pauseIfThrottled,
  type RateLimiter,
  readAccessToken,
  readAnswerBody,
  type SharedTokenSlot,
} from '@shop-lookup/shop-api';
import { envelopeAnswer, PROXY_CODES, safeRetryAfter, type ProxyAnswer } from './proxyAnswers';
import type { Redaction } from './redaction';

/** Why no token: no answer at all, or an answer the client gets instead (its code and msg only). */
export type TokenFailure = Exclude<Exchanged, { kind: 'answer' }> | { kind: 'refused'; answer: ProxyAnswer };

type TokenResult = { ok: true; token: string } | { ok: false; failure: TokenFailure };

export interface UpstreamToken {
  /** The current token, or a new one from /v2/auth. Failures are not remembered: the next call asks again. */
  get(): Promise<TokenResult>;
  /** Upstream refused `token`: forget it (here and in the shared slot), unless another request already replaced it. */
  invalidate(token: string): Promise<void>;
  /** The token held now (for scrubbing answers), if any. */
  current(): string | undefined;
}

export interface UpstreamTokenDeps {
  key: string;
  secret: string;
  limiter: RateLimiter;
  /** The server's exchange with the shop API. */
  exchange: Exchange;
  /** The most bytes the /v2/auth answer may have, decoded (ANSWER_BOUNDS.auth). */
  maxBytes: number;
  /** Aborted when the server closes. */
  signal: AbortSignal;
  /** Shared with other instances: read before asking /v2/auth, written after. */
  shared?: SharedTokenSlot | undefined;
  /** Told every token obtained, so nothing this server writes ever carries it. */
  redaction: Redaction;
}

/** The client's copy of a failed /v2/auth answer: its code and our fixed words, nothing of its body. */
function refusal(status: number, code: number | undefined, retryAfter: string | undefined): ProxyAnswer {
  if (code !== undefined && code < 0) {
    const wait = safeRetryAfter(retryAfter);
    const text =
      code === -1 ? apiCodeAnswer(-1, status) : `${apiCodeAnswer(code, status)} (while getting an access token)`;
    return envelopeAnswer(status, code, text, wait === undefined ? {} : { 'retry-after': wait });
  }
  return envelopeAnswer(
    502,
    PROXY_CODES.gateway,
    `BAD GATEWAY: the shop API's /v2/auth answered HTTP ${status} without an access token; ` +
      'check the target and the API status, then try again.',
  );
}

/**
 * Creates the token holder. Auth calls go through the same limiter as data calls ('other' class).
 * @example const token = createUpstreamToken({ key, secret, limiter, exchange, maxBytes: ANSWER_BOUNDS.auth, signal,
 * redaction });
 * await token.get();
 */
export function createUpstreamToken(deps: UpstreamTokenDeps): UpstreamToken {
  // a failure travels through the holder as this wrapper, so it cannot be mistaken for a shared slot's own error
  type Failed = { tokenFailure: TokenFailure };
  const fail = (failure: TokenFailure): Failed => ({ tokenFailure: failure });

  async function fetchToken(): Promise<string> {
    try {
      await deps.limiter.acquire('other', 'user', deps.signal);
    } catch {
      throw fail({ kind: 'aborted', reason: deps.signal.reason });
    }
    const result = await deps.exchange({
      method: 'POST',
      path: AUTH_PATH,
      body: { key: deps.key, secret: deps.secret },
      signal: deps.signal,
      maxBytes: deps.maxBytes,
    });
    if (result.kind !== 'answer') throw fail(result);
    const { json, code } = readAnswerBody(result.text);
    pauseIfThrottled(deps.limiter, 'other', result.status, code, result.retryAfter);
    const fresh = code === undefined || code === 200 ? readAccessToken(json) : undefined;
    if (fresh === undefined) throw fail({ kind: 'refused', answer: refusal(result.status, code, result.retryAfter) });
    deps.redaction.add(fresh);
    return fresh;
  }

  const holder = createTokenHolder(fetchToken, deps.shared);
  return {
    get: () =>
      holder.get().then(
        (token): TokenResult => ({ ok: true, token }),
        (error: unknown): TokenResult => {
          if (typeof error === 'object' && error !== null && 'tokenFailure' in error) {
            return { ok: false, failure: (error as Failed).tokenFailure };
          }
          throw error;
        },
      ),
    invalidate: (refused) => holder.invalidate(refused),
    current: () => holder.current(),
  };
}
