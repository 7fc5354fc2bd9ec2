// The credential proxy: the relay's door (door/createDoor.ts) in forwarding mode. Every request it lets in is
// forwarded with the proxy's own token, through one rate limiter shared fairly between the clients (each in its
// turn); nothing is synced or kept. The relay (createShopRelay) is the same door with a synced snapshot behind it.
import { createRateLimiter, DEFAULT_RATE_LIMITS, DEFAULT_TARGET, DEFAULT_TIMEOUT_MS } from '@shop-lookup/shop-api';
import { CLIENT_LIMITS, RELAY_DEFAULTS } from './defaults';
import { normalizeBasePath } from './door/allowedPaths';
import { createDoor } from './door/createDoor';
import { createFairShare } from './door/fairShare';
import { createForwarder } from './door/forwardRequest';
import { createRedaction, urlSecrets } from './door/redaction';
import { createRequestGate } from './door/requestGate';
import { createServerLog } from './door/serverLog';
import { checkProxyOptions } from './proxyOptions';
import type { ShopApiProxy, ShopApiProxyOptions } from './proxyTypes';

/**
 * Creates the proxy. The key and secret never leave this process: the client sees only the API's answers.
 * @example const proxy = createShopApiProxy({ key, secret, basePath: '/shop-api', authorize: (req) => isStaff(req)
 * });
 * app.use(proxy);
 */
export function createShopApiProxy(raw: ShopApiProxyOptions): ShopApiProxy {
  const options = checkProxyOptions(raw);
  const target = (options.target ?? DEFAULT_TARGET).replace(/\/+$/, '');
  const basePath = normalizeBasePath(options.basePath ?? '', 'createShopApiProxy');
  const limits = options.rateLimits === false ? false : { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
  // One limiter for every upstream call (auth included): all terminals behind this proxy share the shop's limit,
  // each client in its turn.
  const shopLimiter = createRateLimiter(limits);
  const clientLimits = options.clientLimits;
  const fair = createFairShare({
    limiter: shopLimiter,
    queued: clientLimits === false ? Infinity : (clientLimits?.upstreamQueued ?? CLIENT_LIMITS.upstreamQueued),
    ownShare: 1, // the proxy's own calls are token requests every client waits for
    limits,
    anonymousWaitMs:
      clientLimits === false ? Infinity : (clientLimits?.anonymousWaitMs ?? CLIENT_LIMITS.anonymousWaitMs),
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
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    closing: closing.signal,
    isDown: () => down,
    label: 'proxy',
    redaction,
    answerBounds: options.maxAnswerBytes,
  });

  const proxy = createDoor({
    basePath,
    maxUrlLength: options.maxUrlLength ?? RELAY_DEFAULTS.maxUrlLength,
    gate,
    log,
    closing: closing.signal,
    pathHint: '',
    methodHint: 'this proxy only forwards GET',
    closedAnswer: () => forwarder.closedAnswer(),
    serve: async ({ api, client }, clientGone) =>
      down
        ? forwarder.downAnswer()
        : forwarder.forward(api!, AbortSignal.any([clientGone, closing.signal]), fair.forClient(client)),
    failedAnswer: () => forwarder.badGateway('the proxy failed unexpectedly; see the server log.'),
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
