// The bench's environment: the bench page built and served cross-origin isolated by `vite preview`, mock shop
// APIs mounted at /api/<name>/ on the same origin (no CORS preflights, as behind the usual same-origin proxy),
// headless Chromium over a plain DevTools pipe (cdpPage.mjs: nothing instruments the page's workers), and its
// browser-level session (worker heap and CPU profiles).
import { fileURLToPath } from 'node:url';
import { build, preview, runnerImport } from 'vite';
import { openChromiumPage } from './cdpPage.mjs';

export const root = fileURLToPath(new URL('..', import.meta.url));
const benchConfig = fileURLToPath(new URL('./vite.config.ts', import.meta.url));
export const AUTH = { key: 'demo-key', secret: 'demo-secret' };
export const log = (...m) => console.error('[bench]', ...m);

/**
 * @param siteDir where the page is built (default bench-results/site; a test passes a directory of its own)
 * @example const h = await startHarness(); await h.call('prepare', 'a', h.sessionOptions('big', 'db'));
 * await h.close();
 */
export async function startHarness(siteDir = undefined) {
  const { module: mockServer } = await runnerImport(`${root}packages/mock-server/src/index.ts`);
  const mounts = new Map();
  /** /api/<name>/... → that mock (the path without the prefix); false when no mock is mounted there. */
  const relays = new Map();
  /** Second doors to a relay whose long-polls are parked, unanswered, until closed: a till that is not live. */
  const quiet = new Map();
  const parked = new Set();
  /** What a bench sees of the requests to a relay (its name → fn(req, res)), before the relay answers them. */
  const taps = new Map();
  /** /relay/<name>/... → that relay (it strips its own basePath). */
  const routeToRelay = (req, res) => {
    const m = /^\/relay\/([^/?]+)/.exec(req.url ?? '');
    const name = m && (quiet.get(m[1]) ?? m[1]);
    const relay = name && relays.get(name);
    if (!relay) return false;
    taps.get(name)?.(req, res);
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    if (quiet.has(m[1])) {
      req.url = req.url.replace(`/relay/${m[1]}`, `/relay/${name}`);
      if (/[?&]wait=/.test(req.url)) {
        parked.add(res);
        res.once('close', () => parked.delete(res));
        return true;
      }
    }
    relay(req, res);
    return true;
  };
  const routeToMock = (req, res) => {
    const m = /^\/api\/([^/]+)(\/.*)$/.exec(req.url ?? '');
    const mock = m && mounts.get(m[1]);
    if (!mock) return false;
    req.url = m[2];
    if (process.env.BENCH_MOCK_TIMING) {
      const t0 = performance.now();
      res.on(
        'finish',
        () => (
          (globalThis.__mockMs = (globalThis.__mockMs ?? 0) + performance.now() - t0),
          (globalThis.__mockN = (globalThis.__mockN ?? 0) + 1)
        ),
      );
    }
    // as behind a same-origin proxy, with the isolation headers every response of this origin carries
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    mock.handler(req, res);
    return true;
  };

  const outDir = siteDir ? { build: { outDir: siteDir } } : {};
  await build({ configFile: benchConfig, logLevel: 'warn', ...outDir });
  const server = await preview({ configFile: benchConfig, preview: { open: false }, ...outDir });
  // API requests go straight to the mock, ahead of the preview server's middleware stack (it doubled each
  // request's time on the server side, which is not the engine's and not what a real proxy costs)
  const [serveSite] = server.httpServer.listeners('request');
  server.httpServer.removeAllListeners('request');
  server.httpServer.on('request', (req, res) => routeToMock(req, res) || routeToRelay(req, res) || serveSite(req, res));
  const origin = server.resolvedUrls.local[0].replace(/\/$/, '');
  const { address: host, port } = server.httpServer.address();
  let chromium;
  try {
    chromium = await openChromiumPage(`${origin}/index.html`, `'bench' in window`, {
      onError: (m) => (!m.includes('404') || process.env.BENCH_CONSOLE) && log(m),
    });
    const { cdp, evaluate } = chromium;
    if (!(await evaluate('window.bench.crossOriginIsolated()')))
      throw new Error('the bench page is not cross-origin isolated');
    return {
      origin,
      /** Where the server listens (a shaped link leads here: shapedLink.mjs). */
      address: { host, port },
      /**
       * Opens the bench page from another origin that leads to this server (a shaped link's), or back from
       * `origin`; sessions of the page before are gone.
       */
      async navigate(to) {
        await chromium.pageSession.send('Page.navigate', { url: `${to}/index.html` });
        for (
          let i = 0;
          !(await evaluate(`'bench' in window && location.origin === ${JSON.stringify(to)}`).catch(() => false));
          i++
        ) {
          if (i > 600) throw new Error(`the bench page at ${to} was not ready after 60 s`);
          await new Promise((r) => setTimeout(r, 100));
        }
        if (!(await evaluate('window.bench.crossOriginIsolated()')))
          throw new Error(`the bench page at ${to} is not cross-origin isolated`);
      },
      /** fn(req, res) sees each request to relay `name` before it answers (null: none). */
      tapRelay: (name, fn) => (fn ? taps.set(name, fn) : taps.delete(name)),
      /** Chromium's version ("156.0.…"). */
      version: chromium.version,
      /** The browser process (its children are the renderer, the network service, ...: processCpu.mjs). */
      browserPid: chromium.pid,
      /** The page's own DevTools session (its CPU profile: profile.mjs). */
      pageSession: chromium.pageSession,
      cdp,
      mockServer,
      /**
       * A mock shop API at /api/<name>/ (options of createMockShopApiHandler). Its list pages are serialised once
       * (cacheListPages): the real API's CPU is not on the client's 2 cores, and both rows a ratio compares read
       * the same records.
       */
      mount(name, options) {
        const mock = mockServer.createMockShopApiHandler({ cors: false, cacheListPages: true, ...options });
        mounts.set(name, mock);
        return mock;
      },
      unmount: (name) => mounts.delete(name),
      /**
       * Lists every coupon page of mock `name` once, untimed, so that its page texts are kept (cacheListPages)
       * before the first timed run, as for the runs after it.
       */
      async warmListing(name) {
        const base = `${origin}/api/${name}`;
        const auth = await fetch(`${base}/v2/auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(AUTH),
        });
        const token = (await auth.json()).access_token;
        for (let page = 1, total = 1; page <= total; page++) {
          const res = await fetch(`${base}/v2/shop/coupons?offset=${page}&limit=100`, {
            headers: { 'access-token': token },
          });
          total = JSON.parse(await res.text()).data.pagenation.total_page;
        }
      },
      /**
       * A shop relay (shop-lookup/relay, embedded store) at /relay/<name>/ in front of the mock at /api/<api>/ (its
       * upstream calls go through this server, as to any API). Closed by close().
       */
      async mountRelay(name, api, options = {}) {
        const { module } = await runnerImport(`${root}packages/relay/src/index.ts`);
        const relay = module.createShopRelay({
          ...AUTH,
          target: `${origin}/api/${api}`,
          basePath: `/relay/${name}`,
          public: true,
          rateLimits: false,
          refreshIntervalMs: 24 * 60 * 60 * 1000,
          ...options,
        });
        relays.set(name, relay);
        return relay;
      },
      /** /relay/<alias>/ reaches relay `name`, except its long-polls (parked until close): re-syncs measured alone. */
      quietDoor: (alias, name) => quiet.set(alias, name),
      /** Calls window.bench[fn](...args) in the page. */
      call: (fn, ...a) => evaluate(`window.bench[${JSON.stringify(fn)}](...${JSON.stringify(a)})`),
      /** createShopLookup options of a session against mock `api`. */
      sessionOptions: (api, dbName, extra = {}) => ({
        baseUrl: `${origin}/api/${api}`,
        auth: AUTH,
        dbName,
        rateLimits: false,
        refreshIntervalMs: 24 * 60 * 60 * 1000,
        ...extra,
      }),
      async close() {
        for (const res of parked) res.destroy();
        for (const relay of relays.values()) await relay.close();
        await chromium.close();
        await new Promise((r) => server.httpServer.close(r));
      },
    };
  } catch (error) {
    await chromium?.close();
    await new Promise((r) => server.httpServer.close(r));
    throw error;
  }
}
