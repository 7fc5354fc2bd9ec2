// The proxy's access token: the one token holder (worker/api/tokenHolder.ts) over the proxy's own /v2/auth call,
// whose failures come back as data the client gets as its answer.
import { apiCodeAnswer, createTokenHolder, type RateLimiter, retryAfterMs, type SharedTokenSlot } from '@shop-lookup/shop-api';
import type { UpstreamRequest, UpstreamResult } from './callUpstream';
import { envelopeAnswer, PROXY_CODES, safeRetryAfter, type ProxyAnswer } from './proxyAnswers';
import type { Redaction } from './redaction';

/** Why no token: no answer at all, or an answer the client gets instead (its code and msg only). */
export type TokenFailure = Exclude<UpstreamResult, { kind: 'answer' }> | { kind: 'refused'; answer: ProxyAnswer };

export type TokenResult = { ok: true; token: string } | { ok: false; failure: TokenFailure };

export interface UpstreamToken {
  /** The current token, or a new one from /v2/auth. Failures are not remembered: the next call asks again. */
  get(): Promise<TokenResult>;
  /** Upstream refused `token`: forget it (here and in the shared slot), unless another request already replaced it. */
  invalidate(token: string): Promise<void>;
  /** The token held now (for scrubbing answers), if any. */
  current(): string | undefined;
}

export interface UpstreamTokenDeps {
  target: string;
  key: string;
  secret: string;
  limiter: RateLimiter;
  call: (request: UpstreamRequest, signal?: AbortSignal) => Promise<UpstreamResult>;
  /** Aborted when the proxy closes. */
  signal: AbortSignal;
  /** Shared with other instances: read before asking /v2/auth, written after. */
  shared?: SharedTokenSlot | undefined;
  /** Told every token obtained, so nothing this server writes ever carries it. */
  redaction: Redaction;
}

function tokenIn(json: Record<string, unknown> | undefined): string | undefined {
  const data = json?.data;
  const token =
    json?.access_token ??
    (typeof data === 'object' && data !== null ? (data as Record<string, unknown>).access_token : undefined);
  return typeof token === 'string' && token !== '' ? token : undefined;
}

/** The client's copy of a failed /v2/auth answer: its code and our fixed words, nothing of its body. */
function refusal(result: Extract<UpstreamResult, { kind: 'answer' }>): ProxyAnswer {
  if (result.code !== undefined && result.code < 0) {
    const wait = safeRetryAfter(result.retryAfter);
    const text = result.code === -1 ? apiCodeAnswer(-1, result.status) : `${apiCodeAnswer(result.code, result.status)} (while getting an access token)`;
    return envelopeAnswer(result.status, result.code, text, wait === undefined ? {} : { 'retry-after': wait });
  }
  return envelopeAnswer(
    502,
    PROXY_CODES.gateway,
    `BAD GATEWAY: the shop API's /v2/auth answered HTTP ${result.status} without an access token; ` +
      'check the target and the API status, then try again.',
  );
}

/**
 * Creates the token holder. Auth calls go through the same limiter as data calls ('other' class).
 * @example const token = createUpstreamToken({ target, key, secret, limiter, call, signal }); await token.get();
 */
export function createUpstreamToken(deps: UpstreamTokenDeps): UpstreamToken {
  // a failure travels through the holder as this wrapper, so it cannot be mistaken for a shared slot's own error
  type Failed = { tokenFailure: TokenFailure };
  const fail = (failure: TokenFailure): Failed => ({ tokenFailure: failure });

  async function fetchToken(): Promise<string> {
    try {
      await deps.limiter.acquire('other', 'user', deps.signal);
    } catch {
      throw fail({ kind: 'aborted' });
    }
    const result = await deps.call(
      {
        url: `${deps.target}/v2/auth`,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ key: deps.key, secret: deps.secret }),
      },
      deps.signal,
    );
    if (result.kind !== 'answer') throw fail(result);
    if (result.status === 429 || result.code === -7) {
      deps.limiter.pause('other', retryAfterMs(result.retryAfter) ?? 1000);
    }
    const fresh = result.code === undefined || result.code === 200 ? tokenIn(result.json) : undefined;
    if (fresh === undefined) throw fail({ kind: 'refused', answer: refusal(result) });
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
