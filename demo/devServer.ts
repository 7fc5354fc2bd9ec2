// The demo's server side, for `vite` (dev) and `vite preview`: the shop relay at /shop-api (embedded store), exactly
// as a real deployment runs it, in front of either the embedded mock API (default) or the real shop API
// (SHOP_API_KEY / SHOP_API_SECRET set); SHOP_DEMO_SOURCE=direct puts the bare credential proxy there instead. Plus
// /__demo/api, the page's "cut the API" switch, and (mock mode) the mock's /__mock/* control endpoints on the same
// origin, for tests: a change made there is listed by the relay at once, as its next refresh would. The storefront
// page (storefront.html) has a relay of its own at /storefront-api, with the storefront authorize, on the same store.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Connect, Plugin } from 'vite';
import { mockCodesToTry, type CodeToTry } from '../packages/mock-server/src/codesToTry';
import { createMockData, startMockShopApi, type MockShopApi } from '../packages/mock-server/src/index';
import {
  createMemoryStore,
  createShopApiProxy,
  createShopRelay,
  type Authorize,
  type ShopRelay,
} from '../packages/relay/src/index';

/**
 * The storefront page's relay: anonymous shoppers read product options and one coupon by its exact code
 * (docs/embedding.md).
 */
const STOREFRONT: Authorize = (_req, route) => ['productOptions', 'productOption', 'coupon'].includes(route);

/** What the page is told about its server (inlined as `__SHOP_DEMO__`). */
export interface DemoPageConfig {
  mode: 'mock' | 'real';
  /** Where the proxy forwards to, for the page's header. */
  apiLabel: string;
  /** The products the till tracks: number, display name, unit price (KRW). */
  products: { no: number; name: string; price: number }[];
  /** Codes to try at the till, from the mock's data (none in real mode): coupons and issued coupons. */
  codes: CodeToTry[];
}

export interface DemoSettings {
  mode: 'mock' | 'real';
  /**
   * 'relay' (default): the shop relay serves the tills; 'direct': the credential proxy, tills list the API
   * themselves.
   */
  source: 'relay' | 'direct';
  key: string;
  secret: string;
  /** Upstream origin in real mode. */
  target: string;
  page: DemoPageConfig;
}

/** The till's catalogue in mock mode: product numbers of the mock's data set, with names and prices. */
const MOCK_CATALOGUE: DemoPageConfig['products'] = [
  { no: 13801, name: '린넨 오버핏 셔츠', price: 39_000 },
  { no: 13802, name: '머그컵 세트', price: 18_000 },
  { no: 13805, name: '베이직 후드 집업', price: 59_000 },
];

const DEFAULT_API_TARGET = 'https://api.imweb.me';

/**
 * Reads the demo's environment: SHOP_API_KEY + SHOP_API_SECRET (real API), SHOP_API_TARGET, SHOP_PRODUCTS.
 * @example demoSettingsFromEnv({ SHOP_API_KEY: 'k', SHOP_API_SECRET: 's', SHOP_PRODUCTS: '101,102' })
 */
export function demoSettingsFromEnv(env: Record<string, string | undefined>): DemoSettings {
  const real = Boolean(env.SHOP_API_KEY && env.SHOP_API_SECRET);
  const listed = (env.SHOP_PRODUCTS ?? '')
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isSafeInteger(n) && n > 0);
  const named = (no: number) => MOCK_CATALOGUE.find((p) => p.no === no) ?? { no, name: `상품 #${no}`, price: 10_000 };
  const products = listed.length > 0 ? listed.map(named) : real ? [] : MOCK_CATALOGUE;
  const target = (env.SHOP_API_TARGET || DEFAULT_API_TARGET).replace(/\/+$/, '');
  const source = env.SHOP_DEMO_SOURCE === 'direct' ? 'direct' : 'relay';
  return real
    ? {
        mode: 'real',
        source,
        key: env.SHOP_API_KEY!,
        secret: env.SHOP_API_SECRET!,
        target,
        page: { mode: 'real', apiLabel: target, products, codes: [] },
      }
    : {
        mode: 'mock',
        source,
        key: 'demo-key',
        secret: 'demo-secret',
        target: '',
        // (the embedded mock serves its default data: the same records)
        page: { mode: 'mock', apiLabel: 'mock API', products, codes: mockCodesToTry(createMockData()) },
      };
}

/** The running server side of the demo; tests reach it through the plugin's `api.backend()`. */
export interface DemoBackend {
  mode: 'mock' | 'real';
  /** The embedded mock (mock mode), for tests: upsertCoupon, setDown, inject, requests, ... */
  mock: MockShopApi | null;
  /** Where /shop-api forwards to. */
  upstream: string;
  /** The relay at /shop-api (null with SHOP_DEMO_SOURCE=direct). */
  relay: ShopRelay | null;
  /** Every /shop-api request URL the page's tills made (path and query), for tests. */
  relayRequests: string[];
  /** Every /storefront-api request URL the storefront page made (its relay: the storefront authorize), for tests. */
  storefrontRequests: string[];
  /** The "cut the API" switch. */
  readonly apiDown: boolean;
  setApiDown(down: boolean): void;
  close(): Promise<void>;
}

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** The mock's methods that change its data: the relay lists again after each, as its next refresh would. */
const MOCK_CHANGES = ['upsertCoupon', 'removeCoupon', 'upsertIssuedCoupon', 'setProductOptions'] as const;

async function startBackend(settings: DemoSettings): Promise<DemoBackend & { proxy: Middleware }> {
  // the mock keeps the real API's documented rate limits on: the page must live with them
  const mock = settings.mode === 'mock' ? await startMockShopApi({ key: settings.key, secret: settings.secret }) : null;
  const upstream = mock ? mock.url : settings.target;
  const common = { key: settings.key, secret: settings.secret, target: upstream, basePath: '/shop-api' };
  // public: the demo's dev server is a developer's own machine; a deployment passes `authorize` instead
  // the till's relay and the storefront's share one store: one listing, one token, one rate limit for both
  const store = createMemoryStore();
  // a till page opened as /?till=2 sends `Bearer till-2`: the relay names its uses after it (no secret: public relay)
  const tillOf = (req: IncomingMessage) => {
    const name = /^Bearer (till-\w{1,20})$/.exec(req.headers.authorization ?? '')?.[1];
    return name ? { id: `till:${name}`, identified: true } : (req.socket.remoteAddress ?? 'unknown');
  };
  const relay =
    settings.source === 'relay'
      ? createShopRelay({
          ...common,
          store,
          public: true,
          clientId: tillOf,
          products: settings.page.products.map((p) => p.no),
        })
      : null;
  const storefront = createShopRelay({ ...common, store, basePath: '/storefront-api', authorize: STOREFRONT });
  const storefrontRequests: string[] = [];
  const proxy = relay ? null : createShopApiProxy({ ...common, public: true });
  const relayRequests: string[] = [];
  const open = new Set<ServerResponse>();
  const refresh = () => {
    void relay?.refresh().catch(() => undefined);
    void storefront.refresh().catch(() => undefined);
  };
  if (mock && relay) {
    for (const name of MOCK_CHANGES) {
      const original = (mock as unknown as Record<string, unknown>)[name];
      if (typeof original !== 'function') continue;
      (mock as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
        const result = (original as (...a: unknown[]) => unknown).apply(mock, args);
        refresh();
        return result;
      };
    }
  }
  let apiDown = false;
  let closing: Promise<void> | undefined;
  // "cut the API" with a relay: the tills lose the relay (502, and open long-polls dropped), the relay its upstream
  const serve: Middleware = (req, res, next) => {
    if ((req.url ?? '').startsWith('/storefront-api')) {
      storefrontRequests.push(req.url!);
      if (apiDown)
        return sendJson(res, 502, { code: 'upstream_unreachable', message: 'The demo cut the API ("Cut the API").' });
      return storefront(req, res, next);
    }
    if (!(req.url ?? '').startsWith('/shop-api')) return next();
    relayRequests.push(req.url!);
    if (relay && apiDown)
      return sendJson(res, 502, { code: 'upstream_unreachable', message: 'The demo cut the API ("Cut the API").' });
    open.add(res);
    res.once('close', () => open.delete(res));
    (relay ?? proxy!)(req, res, next);
  };
  return {
    mode: settings.mode,
    mock,
    upstream,
    relay,
    relayRequests,
    storefrontRequests,
    proxy: serve,
    get apiDown() {
      return apiDown;
    },
    setApiDown(down) {
      apiDown = down;
      proxy?.setUpstreamDown(down);
      mock?.setDown(down);
      if (down && relay) for (const res of open) res.socket?.destroy();
      if (!down) refresh();
    },
    close() {
      closing ??= (async () => {
        proxy?.close();
        await storefront.close();
        await relay?.close();
        await mock?.close();
      })();
      return closing;
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > 10_000) req.destroy(new Error('body too large'));
    });
    req.on('end', () => {
      try {
        resolve(text.trim() === '' ? {} : JSON.parse(text));
      } catch (error) {
        reject(error);
      }
    });
    req.on('error', reject);
  });
}

/** GET /__demo/api → { mode, down, upstream }; POST /__demo/api { down: boolean } flips the "cut the API" switch. */
function controlEndpoint(backend: DemoBackend): Middleware {
  return (req, res, next) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/__demo/api') return next();
    const state = () => ({
      mode: backend.mode,
      down: backend.apiDown,
      upstream: backend.mode === 'mock' ? 'mock' : backend.upstream,
    });
    if (req.method === 'GET') return sendJson(res, 200, state());
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'GET or POST' });
    readJson(req).then(
      (body) => {
        const down = (body as { down?: unknown }).down;
        if (typeof down !== 'boolean') return sendJson(res, 400, { error: 'body must be {"down": true|false}' });
        backend.setApiDown(down);
        sendJson(res, 200, state());
      },
      () => sendJson(res, 400, { error: 'body must be JSON' }),
    );
  };
}

/** Mock mode: the mock's own /__mock/* endpoints, served on the page's origin (the same mock state). */
function mockControl(mock: MockShopApi, relay: ShopRelay | null): Middleware {
  return (req, res, next) => {
    if (!(req.url ?? '').startsWith('/__mock/')) return next();
    // a change made through the control endpoints is listed by the relay at once
    if (req.method !== 'GET' && relay) res.once('finish', () => void relay.refresh().catch(() => undefined));
    mock.handler(req, res, next);
  };
}

/**
 * The demo's server plugin. `api.backend()` resolves to the running backend (mock, switch) once the server started.
 * @example const backend = await (server.config.plugins.find((p) => p.name === 'shop-lookup-demo')!.api as
 * DemoPluginApi).backend();
 */
export interface DemoPluginApi {
  backend(): Promise<DemoBackend>;
}

export function shopApiDemo(settings: DemoSettings): Plugin {
  let started: Promise<DemoBackend & { proxy: Middleware }> | null = null;
  const start = () => (started ??= startBackend(settings));
  const stop = async () => {
    const running = started;
    started = null;
    if (running) await (await running).close();
  };

  async function mount(middlewares: Connect.Server, httpServer: { once(e: 'close', fn: () => void): unknown } | null) {
    const backend = await start();
    const where = backend.mock ? `the mock API at ${backend.mock.url} (control: /__mock/*)` : backend.upstream;
    const via = backend.relay ? 'the shop relay (embedded store)' : 'the credential proxy';
    console.info(`[shop-lookup demo] /shop-api: ${via} → ${where}; "cut the API": POST /__demo/api {"down":true}`);
    middlewares.use(controlEndpoint(backend));
    if (backend.mock) middlewares.use(mockControl(backend.mock, backend.relay));
    middlewares.use(backend.proxy);
    httpServer?.once('close', () => void stop());
  }

  const api: DemoPluginApi = { backend: start };
  return {
    name: 'shop-lookup-demo',
    api,
    async configureServer(server) {
      await mount(server.middlewares, server.httpServer);
    },
    async configurePreviewServer(server) {
      await mount(server.middlewares, server.httpServer);
    },
    async closeBundle() {
      // dev: called on server.close(); build: nothing was started
      await stop();
    },
  };
}
