// The proxy as a request handler: refuse what is not one of the served GETs, then forward with the proxy's own
// token through one rate limiter, renewing the token once when upstream refuses it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRateLimiter, DEFAULT_RATE_LIMITS } from '../worker/rateLimiter';
import { localUrl, matchAllowedPath, type AllowedRoute } from './allowedPaths';
import { callUpstream, retryAfterMs, type UpstreamRequest, type UpstreamResult } from './callUpstream';
import { envelopeAnswer, PROXY_CODES, scrubBody, sendAnswer, upstreamAnswer, type ProxyAnswer } from './proxyAnswers';
import type { ShopApiProxy, ShopApiProxyOptions } from './types';
import { createUpstreamToken, type TokenFailure } from './upstreamToken';

function normalizeBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '');
  if (trimmed !== '' && !trimmed.startsWith('/')) {
    throw new TypeError(`createShopApiProxy: basePath must start with '/' (got '${basePath}')`);
  }
  return trimmed;
}

/** A -2 (or a 401 that is not a permission/credential refusal) means our token is no longer accepted. */
function tokenRefused(result: Extract<UpstreamResult, { kind: 'answer' }>): boolean {
  if (result.code === -2) return true;
  return result.status === 401 && result.code !== -1 && result.code !== -5 && result.code !== -6;
}

/**
 * Creates the proxy. The key and secret never leave this process: the client sees only the API's answers.
 * @example const proxy = createShopApiProxy({ key, secret, basePath: '/shop-api' }); app.use(proxy);
 */
export function createShopApiProxy(options: ShopApiProxyOptions): ShopApiProxy {
  if (!options.key || !options.secret) throw new TypeError('createShopApiProxy: key and secret are required');
  const target = (options.target ?? 'https://api.imweb.me').replace(/\/+$/, '');
  const basePath = normalizeBasePath(options.basePath ?? '');
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxUrlLength = options.maxUrlLength ?? 2048;
  const fetchFn = options.fetch ?? globalThis.fetch;
  const limits = options.rateLimits === false ? false : { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
  // One limiter for every upstream call (auth included): all terminals behind this proxy share the shop's limit.
  const limiter = createRateLimiter(limits);
  const closing = new AbortController();
  let down = false;

  const call = (request: UpstreamRequest, signal?: AbortSignal): Promise<UpstreamResult> =>
    callUpstream({ fetch: fetchFn, timeoutMs }, request, signal);
  const token = createUpstreamToken({
    target,
    key: options.key,
    secret: options.secret,
    limiter,
    call,
    signal: closing.signal,
  });

  const badGateway = (why: string): ProxyAnswer => envelopeAnswer(502, PROXY_CODES.gateway, `BAD GATEWAY: ${why}`);
  const downAnswer = (): ProxyAnswer =>
    badGateway(
      'the shop API is switched off on this proxy (setUpstreamDown); ' +
        'answers resume when it is switched back on. Local data can still be used.',
    );
  const closedAnswer = (): ProxyAnswer => badGateway('the shop API proxy has been closed; restart the server.');

  /** The client's answer when upstream gave none (undefined: the client is gone, nobody to answer). */
  function failureAnswer(failure: TokenFailure): ProxyAnswer | undefined {
    switch (failure.kind) {
      case 'refused':
        return failure.answer;
      case 'unreachable':
        return badGateway(
          `the shop API at ${target} could not be reached (${failure.reason}). ` +
            'Check the server\'s network connection and the API status, then try again.',
        );
      case 'timeout':
        return envelopeAnswer(
          504,
          PROXY_CODES.gateway,
          `GATEWAY TIMEOUT: the shop API at ${target} did not answer within ${timeoutMs} ms. Try again later.`,
        );
      case 'aborted':
        return closing.signal.aborted ? closedAnswer() : undefined;
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
      if (down) return downAnswer();
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
        // Everyone of this class waits, not only this terminal: the limit is per shop.
        limiter.pause(route.cls, retryAfterMs(result.retryAfter, 1000));
      }
      if (!renewed && tokenRefused(result)) {
        token.invalidate(current.token);
        renewed = true;
        continue;
      }
      const body = scrubBody(result.body, [options.secret, current.token, token.current()]);
      return upstreamAnswer({ ...result, body });
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): Promise<void> {
    const url = req.url ?? '/';
    const local = localUrl(url, basePath);
    if (local === undefined) {
      if (next) return next();
      return sendAnswer(res, envelopeAnswer(404, PROXY_CODES.path, 'NO SUCH SERVICE: this path is not served here'));
    }
    if (url.length > maxUrlLength) {
      const msg = `URI TOO LONG: request URLs are limited to ${maxUrlLength} characters`;
      return sendAnswer(res, envelopeAnswer(414, PROXY_CODES.path, msg));
    }
    const route = matchAllowedPath(local);
    if (!route.ok) {
      const title = route.status === 404 ? 'NO SUCH SERVICE' : 'INVALID PATH';
      return sendAnswer(res, envelopeAnswer(route.status, PROXY_CODES.path, `${title}: ${route.reason}`));
    }
    if (req.method !== 'GET') {
      const msg = `NO SUCH METHOD: ${req.method ?? '?'} is not allowed; this proxy only forwards GET`;
      return sendAnswer(res, envelopeAnswer(405, PROXY_CODES.method, msg, { allow: 'GET' }));
    }
    if (closing.signal.aborted) return sendAnswer(res, closedAnswer());
    if (down) return sendAnswer(res, downAnswer());

    // A client that disconnects takes its queued or in-flight upstream request with it.
    const clientGone = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) clientGone.abort();
    };
    res.on('close', onClose);
    try {
      const answer = await forward(route, AbortSignal.any([clientGone.signal, closing.signal]));
      if (answer) sendAnswer(res, answer);
    } finally {
      res.off('close', onClose);
    }
  }

  const proxy = ((req, res, next) => {
    handle(req, res, next).catch((error: unknown) => {
      // Only a bug gets here: log it, and answer without details (they could hold anything).
      console.error('[shop-api-proxy]', error);
      sendAnswer(res, badGateway('the proxy failed unexpectedly; see the server log.'));
    });
  }) as ShopApiProxy;
  proxy.setUpstreamDown = (value) => {
    down = value;
  };
  proxy.close = () => {
    if (closing.signal.aborted) return;
    closing.abort();
    limiter.dispose();
  };
  return proxy;
}
