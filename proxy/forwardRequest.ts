// Forwarding one allowed GET to the shop API with the server's own token, through the shared rate limiter,
// renewing the token once when upstream refuses it. Used by the proxy for every request and by the relay for
// single items. Failures become answers in the API's envelope, so the library reads them like any API error.
import type { RateLimiter } from '../worker/api/rateLimiter';
import type { AllowedRoute } from './allowedPaths';
import { retryAfterMs } from '../worker/api/retryAfter';
import { callUpstream, type UpstreamRequest, type UpstreamResult } from './callUpstream';
import { envelopeAnswer, PROXY_CODES, scrubBody, upstreamAnswer, type ProxyAnswer } from './proxyAnswers';
import type { SharedTokenSlot } from '../worker/api/tokenHolder';
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
}

export interface Forwarder {
  /** The client's answer; undefined when the client is gone (nobody to answer). */
  forward(route: AllowedRoute, signal: AbortSignal): Promise<ProxyAnswer | undefined>;
  badGateway(why: string): ProxyAnswer;
  closedAnswer(): ProxyAnswer;
  downAnswer(): ProxyAnswer;
}

/** A -2 (or a 401 that is not a permission/credential refusal) means our token is no longer accepted. */
function tokenRefused(result: Extract<UpstreamResult, { kind: 'answer' }>): boolean {
  if (result.code === -2) return true;
  return result.status === 401 && result.code !== -1 && result.code !== -5 && result.code !== -6;
}

/** @example const f = createForwarder({ target, key, secret, limiter, fetch, timeoutMs, closing, label: 'proxy' }); */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const { target, limiter, closing, timeoutMs } = options;
  const call = (request: UpstreamRequest, signal?: AbortSignal): Promise<UpstreamResult> =>
    callUpstream({ fetch: options.fetch, timeoutMs }, request, signal);
  const token = createUpstreamToken({
    target,
    key: options.key,
    secret: options.secret,
    limiter,
    call,
    signal: closing,
    shared: options.sharedToken,
  });

  const badGateway = (why: string): ProxyAnswer => envelopeAnswer(502, PROXY_CODES.gateway, `BAD GATEWAY: ${why}`);
  const downAnswer = (): ProxyAnswer =>
    badGateway(
      `the shop API is switched off on this ${options.label} (setUpstreamDown); ` +
        'answers resume when it is switched back on. Local data can still be used.',
    );
  const closedAnswer = (): ProxyAnswer => badGateway(`the shop API ${options.label} has been closed; restart the server.`);

  function failureAnswer(failure: TokenFailure): ProxyAnswer | undefined {
    switch (failure.kind) {
      case 'refused':
        return failure.answer;
      case 'unreachable':
        return badGateway(
          `the shop API at ${target} could not be reached (${failure.reason}). ` +
            "Check the server's network connection and the API status, then try again.",
        );
      case 'timeout':
        return envelopeAnswer(
          504,
          PROXY_CODES.gateway,
          `GATEWAY TIMEOUT: the shop API at ${target} did not answer within ${timeoutMs} ms. Try again later.`,
        );
      case 'aborted':
        return closing.aborted ? closedAnswer() : undefined;
    }
  }

  async function forward(route: AllowedRoute, signal: AbortSignal): Promise<ProxyAnswer | undefined> {
    let renewed = false;
    for (;;) {
      const current = await token.get();
      if (!current.ok) return failureAnswer(current.failure);
      try {
        await limiter.acquire(route.cls, 'user', signal);
      } catch {
        return failureAnswer({ kind: 'aborted' });
      }
      // The switch may have flipped while this request waited for its slot.
      if (options.isDown?.()) return downAnswer();
      const result = await call(
        {
          url: `${target}${route.path}${route.query}`,
          method: 'GET',
          // Only our headers: the client's access-token, cookie and authorization never go upstream.
          headers: { accept: 'application/json', 'access-token': current.token },
        },
        signal,
      );
      if (result.kind !== 'answer') return failureAnswer(result);
      if (result.status === 429 || result.code === -7) {
        // Everyone of this class waits, not only this client: the limit is per shop.
        limiter.pause(route.cls, retryAfterMs(result.retryAfter) ?? 1000);
      }
      if (!renewed && tokenRefused(result)) {
        await token.invalidate(current.token);
        renewed = true;
        continue;
      }
      if (result.json === undefined) {
        // an HTML error page (a gateway's 502), cut-off JSON: never passed on as is, the browser might render it
        const type = result.contentType ? ` (${result.contentType.split(';')[0]})` : '';
        return badGateway(
          `the shop API answered HTTP ${result.status} with something that is not its JSON envelope${type}. ` +
            'A gateway in front of the API may be failing; try again later.',
        );
      }
      const body = scrubBody(result.body, [options.secret, current.token, token.current()]);
      return upstreamAnswer({ ...result, body });
    }
  }

  return { forward, badGateway, closedAnswer, downAnswer };
}
