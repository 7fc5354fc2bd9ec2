// The proxy's access token: fetched from /v2/auth with the shop's key/secret, kept in this process's memory only,
// shared by every request (and every terminal) the proxy serves. Concurrent callers share one /v2/auth request.
import type { RateLimiter } from '../worker/api/rateLimiter';
import { retryAfterMs } from '../worker/api/httpTransport';
import type { UpstreamRequest, UpstreamResult } from './callUpstream';
import { envelopeAnswer, PROXY_CODES, redact, type ProxyAnswer } from './proxyAnswers';

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

/** Where several server instances keep one token (the relay's store). */
export interface SharedTokenSlot {
  read(): Promise<string | null>;
  write(token: string): Promise<void>;
  /** Forgets `token` unless another instance already replaced it. */
  drop(token: string): Promise<void>;
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
}

function tokenIn(json: Record<string, unknown> | undefined): string | undefined {
  const data = json?.data;
  const token =
    json?.access_token ??
    (typeof data === 'object' && data !== null ? (data as Record<string, unknown>).access_token : undefined);
  return typeof token === 'string' && token !== '' ? token : undefined;
}

/** The client's copy of a failed /v2/auth answer: its code and msg, nothing else from it. */
function refusal(result: Extract<UpstreamResult, { kind: 'answer' }>, deps: UpstreamTokenDeps): ProxyAnswer {
  const upstreamMsg = typeof result.json?.msg === 'string' ? result.json.msg.slice(0, 200) : '';
  const msg = redact(upstreamMsg, [deps.secret, deps.key]);
  if (result.code !== undefined && result.code < 0) {
    const advice =
      result.code === -1
        ? 'the shop API refused the key/secret configured on the proxy: check them'
        : 'the proxy could not get an access token from the shop API';
    const headers: Record<string, string> = result.retryAfter ? { 'retry-after': result.retryAfter } : {};
    return envelopeAnswer(result.status, result.code, `${msg || 'ERROR'} (${advice})`, headers);
  }
  return envelopeAnswer(
    502,
    PROXY_CODES.gateway,
    `BAD GATEWAY: the shop API's /v2/auth answered HTTP ${result.status} without an access token; ` +
      'check the proxy target and the API status, then try again.',
  );
}

/**
 * Creates the token holder. Auth calls go through the same limiter as data calls ('other' class).
 * @example const token = createUpstreamToken({ target, key, secret, limiter, call, signal }); await token.get();
 */
export function createUpstreamToken(deps: UpstreamTokenDeps): UpstreamToken {
  let token: string | undefined;
  let pending: Promise<TokenResult> | undefined;

  async function fetchToken(): Promise<TokenResult> {
    try {
      await deps.limiter.acquire('other', 'user', deps.signal);
    } catch {
      return { ok: false, failure: { kind: 'aborted' } };
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
    if (result.kind !== 'answer') return { ok: false, failure: result };
    if (result.status === 429 || result.code === -7) {
      deps.limiter.pause('other', retryAfterMs(result.retryAfter) ?? 1000);
    }
    const fresh = result.code === undefined || result.code === 200 ? tokenIn(result.json) : undefined;
    if (fresh === undefined) return { ok: false, failure: { kind: 'refused', answer: refusal(result, deps) } };
    token = fresh;
    await deps.shared?.write(fresh);
    return { ok: true, token: fresh };
  }

  async function sharedOrFetch(): Promise<TokenResult> {
    const shared = await deps.shared?.read();
    if (shared) {
      token = shared;
      return { ok: true, token: shared };
    }
    return fetchToken();
  }

  return {
    get() {
      if (token !== undefined) return Promise.resolve({ ok: true, token });
      pending ??= sharedOrFetch().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    async invalidate(refused) {
      if (token === refused) token = undefined;
      await deps.shared?.drop(refused);
    },
    current: () => token,
  };
}
