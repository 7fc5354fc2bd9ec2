// The proxy as a request handler: refuse what is not one of the served GETs, let through only whom the host
// authorises (within each client's bounds), then forward with the proxy's own token through one rate limiter,
// shared fairly between the clients (each in its turn).
// The relay (shop-lookup/relay) is the same server component with a synced snapshot behind it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRateLimiter, DEFAULT_RATE_LIMITS } from '@shop-lookup/shop-api';
import { localUrl, matchAllowedPath, normalizeBasePath } from './door/allowedPaths';
import { DEFAULT_CLIENT_LIMITS } from './door/clientBounds';
import { createFairShare } from './door/fairShare';
import { createForwarder } from './door/forwardRequest';
import { apiRefusal, envelopeAnswer, PROXY_CODES, sendAnswer } from './door/proxyAnswers';
import { createRedaction, urlSecrets } from './door/redaction';
import { answerAdmitted, createRequestGate } from './door/requestGate';
import { createServerLog } from './door/serverLog';
import { checkProxyOptions } from './door/serverOptions';
import type { ShopApiProxy, ShopApiProxyOptions } from './door/types';

/**
 * Creates the proxy. The key and secret never leave this process: the client sees only the API's answers.
 * @example const proxy = createShopApiProxy({ key, secret, basePath: '/shop-api', authorize: (req) => isStaff(req) }); app.use(proxy);
 */
export function createShopApiProxy(raw: ShopApiProxyOptions): ShopApiProxy {
  const options = checkProxyOptions(raw);
  const target = (options.target ?? 'https://api.imweb.me').replace(/\/+$/, '');
  const basePath = normalizeBasePath(options.basePath ?? '', 'createShopApiProxy');
  const maxUrlLength = options.maxUrlLength ?? 2048;
  const limits = options.rateLimits === false ? false : { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
  // One limiter for every upstream call (auth included): all terminals behind this proxy share the shop's limit,
  // each client in its turn.
  const shopLimiter = createRateLimiter(limits);
  const clientLimits = options.clientLimits;
  const fair = createFairShare({
    limiter: shopLimiter,
    queued: clientLimits === false ? Infinity : (clientLimits?.upstreamQueued ?? DEFAULT_CLIENT_LIMITS.upstreamQueued),
    ownShare: 1, // the proxy's own calls are token requests every client waits for
    limits,
  });
  const closing = new AbortController();
  // nothing the proxy writes (answers, logs) carries the key, the secret, a token or the target's password
  const redaction = createRedaction([options.key, options.secret, ...urlSecrets(target)]);
  const log = createServerLog(redaction, 'shop-api-proxy');
  const gate = createRequestGate({ component: 'createShopApiProxy', ...options, log });
  let down = false;
  const forwarder = createForwarder({
    target,
    key: options.key,
    secret: options.secret,
    limiter: fair.own,
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? 15_000,
    closing: closing.signal,
    isDown: () => down,
    label: 'proxy',
    redaction,
  });

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
    if (closing.signal.aborted) return sendAnswer(res, forwarder.closedAnswer());
    const admitted = await gate.admit(req, res, route.name, apiRefusal);
    if (!admitted) return;
    const turn = fair.forClient(admitted.clientId);
    await answerAdmitted(res, admitted.leave, async (clientGone) =>
      down ? forwarder.downAnswer() : forwarder.forward(route, AbortSignal.any([clientGone, closing.signal]), turn),
    );
  }

  const proxy = ((req, res, next) => {
    handle(req, res, next).catch((error: unknown) => {
      // Only a bug gets here: log it, and answer without details (they could hold anything).
      log('error', 'a request failed', error);
      sendAnswer(res, forwarder.badGateway('the proxy failed unexpectedly; see the server log.'));
    });
  }) as ShopApiProxy;
  proxy.setUpstreamDown = (value) => {
    down = value;
  };
  proxy.close = () => {
    if (closing.signal.aborted) return;
    closing.abort();
    gate.close();
    fair.dispose();
    shopLimiter.dispose();
  };
  return proxy;
}
