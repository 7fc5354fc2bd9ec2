// End-to-end harness: the demo's own Vite dev server (demo/vite.config.ts, mock mode) started through Vite's JS
// API on a free port behind a TCP proxy that can cut the network (networkCut.ts), one browser engine (engines/),
// a fresh context (device) per test, and the demo's usual steps written once for every engine. `e2eSuite` runs a
// suite on each engine in turn (E2E_ENGINES), each with its own demo server and its engine started once; the
// engine's name is in every test's name. `built: true`: the demo built once (`vite build`, the worker split into
// chunks as in production) and served by `vite preview` instead of the dev server. Screenshots go to
// test-results/e2e/<name>-<engine>.png.
import { appendFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, onTestFailed } from 'vitest';
import { build, createServer, preview, type Plugin, type PreviewServer, type ViteDevServer } from 'vite';
import type { DemoBackend, DemoPluginApi } from '../../demo/devServer';
import type { MockShopApi } from '../../packages/mock-server/src';
import {
  enginesOfRun,
  laneKey,
  launchEngine,
  type Engine,
  type EngineContext,
  type EngineName,
  type EngineOptions,
  type EnginePage,
} from './engines';
import { startNetworkCut, type NetworkCut } from './networkCut';
import { attrOf, click, fill, tid, waitFor } from './page';

export * from './page';
export type { EngineContext, EngineName, EnginePage } from './engines';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const artifacts = fileURLToPath(new URL('../../test-results/e2e/', import.meta.url));

export interface Demo {
  /** http://127.0.0.1:<port> of the demo's dev server (or preview server), through the network cut. */
  url: string;
  server: ViteDevServer | PreviewServer;
  /** The built demo's folder (`built: true`), else null. */
  outDir: string | null;
  backend: DemoBackend;
  /** The embedded mock API behind the relay or proxy: change its data, take it down, read its request log. */
  mock: MockShopApi;
  engine: Engine;
  /** Every connection of the browsers to the demo server: cut() is "the network goes" (networkCut.ts). */
  network: NetworkCut;
  /** A fresh context (own storage, own service worker); closed by close(). */
  newContext(): Promise<EngineContext>;
  /** Saves a screenshot of `page` as test-results/e2e/<name>-<engine>.png. */
  screenshot(page: EnginePage, name: string): Promise<void>;
  close(): Promise<void>;
}

export interface DemoOptions extends EngineOptions {
  /** 'direct': the bare credential proxy at /shop-api instead of the relay (tests of the till's own listing). */
  source?: 'relay' | 'direct';
  /** The demo as production runs it: built once per test file (code-split worker) and served by `vite preview`. */
  built?: boolean;
}

/**
 * No file watcher (a file edited meanwhile must not reload the page mid-test) and no HMR socket (once the network
 * comes back, Vite's client would reload the page it lost its socket in). An inline `server.watch: null` would be
 * dropped when Vite merges it into the config file's settings.
 */
function noFileWatching(): Plugin {
  return {
    name: 'e2e-no-file-watching',
    configResolved(config) {
      (config.server as { watch: unknown }).watch = null;
      (config.server as { ws: unknown }).ws = false;
    },
  };
}

const demoConfig = () =>
  ({
    configFile: `${repoRoot}demo/vite.config.ts`,
    configLoader: 'runner',
    // one dependency cache per vitest pool slot: test files running side by side never optimise into one folder
    cacheDir: `${repoRoot}node_modules/.vite/demo-e2e-${laneKey()}`,
    logLevel: (process.env.E2E_VITE_LOG as 'info' | undefined) ?? 'warn',
    clearScreen: false,
  }) as const;

/** Builds the demo into `outDir` as production does (`define`: values the build inlines, over the config's). */
async function buildDemoInto(outDir: string, define: Record<string, string> = {}): Promise<void> {
  // (no plugin timings: the build's worker transform is slow on a busy machine, and says so as a warning)
  await build({
    ...demoConfig(),
    define,
    build: { outDir, emptyOutDir: true, sourcemap: false, rolldownOptions: { checks: { pluginTimings: false } } },
  });
}

let built: Promise<string> | undefined;
let builtDir: string | undefined;
/** The demo built into a temp folder, once per test file (removed after the file: removeBuiltDemo). */
function builtDemo(): Promise<string> {
  built ??= (async () => {
    const outDir = (builtDir = await mkdtemp(join(tmpdir(), 'shop-lookup-demo-built-')));
    await buildDemoInto(outDir);
    return outDir;
  })();
  return built;
}

/**
 * "A new build is deployed": the demo built again into the folder `vite preview` serves, with `buildLabel` as the
 * build the header shows. Later suites of the file are served this build.
 */
export async function rebuildDemo(demo: Demo, buildLabel: string): Promise<void> {
  if (!demo.outDir) throw new Error('rebuildDemo: the demo is not built (e2eSuite demo: { built: true })');
  await buildDemoInto(demo.outDir, { __DEMO_BUILD__: JSON.stringify(buildLabel) });
}

async function removeBuiltDemo(): Promise<void> {
  await built?.catch(() => undefined);
  const outDir = builtDir;
  built = builtDir = undefined;
  if (outDir) await rm(outDir, { recursive: true, force: true });
}

/** Starts the demo server in mock mode, the network cut in front of it, and the engine. */
async function startDemo(engineName: EngineName, options: DemoOptions = {}): Promise<Demo> {
  // mock mode whatever the developer's shell says (the build inlines the page's settings too)
  process.env.SHOP_API_KEY = '';
  process.env.SHOP_API_SECRET = '';
  process.env.SHOP_PRODUCTS = '';
  process.env.SHOP_DEMO_SOURCE = options.source ?? 'relay';
  const listen = { port: 0, host: '127.0.0.1', strictPort: false };
  let server: ViteDevServer | PreviewServer;
  const outDir = options.built ? await builtDemo() : null;
  if (outDir) {
    server = await preview({ ...demoConfig(), build: { outDir }, preview: listen });
  } else {
    const dev = await createServer({ ...demoConfig(), server: listen, plugins: [noFileWatching()] });
    await dev.listen();
    server = dev;
  }
  const network = await startNetworkCut((server.httpServer!.address() as AddressInfo).port);
  const url = `http://127.0.0.1:${network.port}`;
  const plugin = server.config.plugins.find((p) => p.name === 'shop-lookup-demo');
  const backend = await (plugin!.api as DemoPluginApi).backend();
  if (!backend.mock) throw new Error('the demo server did not start in mock mode');
  const mock = backend.mock;
  const stopServer = async () => {
    await network.close();
    await server.close();
    await backend.close();
  };

  let engine: Engine;
  try {
    engine = await launchEngine(engineName, { storageLimitBytes: options.storageLimitBytes });
  } catch (error) {
    await stopServer();
    throw error;
  }
  const contexts = new Set<EngineContext>();
  await mkdir(artifacts, { recursive: true });

  return {
    url,
    server,
    outDir,
    backend,
    mock,
    engine,
    network,
    async newContext() {
      const context = await engine.newContext();
      contexts.add(context);
      const close = context.close;
      return { newPage: context.newPage, close: () => (contexts.delete(context), close()) };
    },
    screenshot: (page, name) => page.screenshot(`${artifacts}${name}-${engineName}.png`),
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await engine.close();
      await stopServer();
    },
  };
}

/**
 * One suite, every engine of the run in turn: `body` declares the tests once; they run against a demo server and
 * an engine of their own for each engine, under "<title> [<engine>]".
 * @example e2eSuite('demo page offline', { timeout: 120_000 }, (t) => { it('…', async () => { const c = await
 * t.demo.newContext();
 * … }); });
 */
export function e2eSuite(
  title: string,
  options: {
    timeout?: number;
    demo?: DemoOptions;
    /** Only these engines (of the run's): a suite whose issue asks for some engines, not all. */
    engines?: readonly EngineName[];
  },
  body: (t: { readonly demo: Demo; readonly engine: EngineName }) => void,
): void {
  for (const engine of enginesOfRun().filter((e) => !options.engines || options.engines.includes(e))) {
    // WebKit's tests get one more try: its WebDriver once left a command unanswered (the test ran into its timeout);
    // a test that fails the same way twice still fails
    describe(`${title} [${engine}]`, { timeout: options.timeout, retry: engine === 'webkit' ? 1 : 0 }, () => {
      let demo: Demo | undefined;
      let startedAt = 0;
      beforeAll(async () => {
        startedAt = performance.now();
        demo = await startDemo(engine, options.demo);
      }, 180_000);
      afterAll(async () => {
        await demo?.close();
        // the suite's wall time on this engine, start to close (test-results/e2e/timings.jsonl, one line a suite)
        const ms = Math.round(performance.now() - startedAt);
        await appendFile(
          `${artifacts}timings.jsonl`,
          `${JSON.stringify({ suite: title, engine, ms, at: new Date().toISOString() })}\n`,
        ).catch(() => undefined);
      }, 60_000);
      // every failed try is printed, a retried one too (the reporter shows only the last): a flake that passes on its
      // retry still costs the lane its timeouts, and this says where it waited
      beforeEach(() => {
        onTestFailed(({ task }) => {
          const errors = (task.result?.errors ?? []).map((e) => e.message).join(' | ');
          console.log(`[e2e] ${engine}: "${task.name}" failed on try ${(task.result?.retryCount ?? 0) + 1}: ${errors}`);
        });
      });
      body({
        engine,
        get demo() {
          if (!demo) throw new Error(`the ${engine} demo did not start`);
          return demo;
        },
      });
    });
  }
  // the build is shared by the engines' suites of this file: gone after the last
  if (options.demo?.built) afterAll(removeBuiltDemo);
}

/** The status bar's network badge, offline / online. */
export const offlineBadge = '[data-testid="net-badge"][data-state="offline"]';
export const onlineBadge = '[data-testid="net-badge"][data-state="online"]';

/** A new page of `context` at the demo (not waiting for any sync). */
export async function openPage(context: EngineContext, demo: Demo): Promise<EnginePage> {
  const page = await context.newPage();
  await page.goto(demo.url);
  return page;
}

/** Opens the demo's storefront page and waits until its product's options are synced. */
export async function openStorefront(context: EngineContext, demo: Demo): Promise<EnginePage> {
  const page = await context.newPage();
  await page.goto(`${demo.url}/storefront.html`);
  await waitFor(page, '[data-testid="options"][data-synced-at]', 'the storefront synced its options');
  return page;
}

/**
 * Opens the till and waits until a full sync (coupons and options) is done and, in the built demo, the app shell is
 * cached (the dev server keeps none: the header says so).
 */
export async function openTill(context: EngineContext, demo: Demo): Promise<EnginePage> {
  const page = await openPage(context, demo);
  await waitForFirstSync(page);
  if (demo.outDir)
    await waitFor(page, '[data-testid="offline-ready"][data-state="ready"]', 'the app shell cached for offline use');
  else
    await waitFor(
      page,
      '[data-testid="offline-ready"][data-state="dev"]',
      'the dev server says it keeps no offline shell',
    );
  return page;
}

/** Waits until the status bar shows a finished sync of coupons and options. */
export async function waitForFirstSync(page: EnginePage): Promise<void> {
  await waitFor(page, '[data-testid="synced-coupons"][data-at]', 'coupons synced');
  await waitFor(page, '[data-testid="synced-options"][data-at]', 'options synced');
  await waitFor(page, '[data-testid="status"][data-phase="idle"]', 'the engine idle');
}

/**
 * "The network goes": every connection to the demo server dropped, then Sync now, so the engine finds out at
 * once rather than at its next request (it is not told: see networkCut.ts).
 */
export async function goOffline(demo: Demo, page: EnginePage): Promise<void> {
  demo.network.cut();
  await click(page, tid('sync-now'));
  await waitFor(page, offlineBadge, 'the till shows offline once the network is gone');
}

/** The network back; Sync now, so the engine finds out at once. */
export async function goOnline(demo: Demo, page: EnginePage): Promise<void> {
  demo.network.restore();
  await click(page, tid('sync-now'));
  await waitFor(page, onlineBadge, 'the till shows online once the network is back');
}

/**
 * Applies a coupon code at checkout. With an amount it is a new checkout: the applied coupon is removed first
 * (otherwise changing the amount re-checks it, which is one more verdict).
 */
export async function applyCoupon(page: EnginePage, code: string, amount?: number): Promise<void> {
  if (amount !== undefined) {
    await click(page, tid('remove-coupon'));
    await fill(page, tid('order-amount'), String(amount));
  }
  await fill(page, tid('coupon-code'), code);
  await click(page, tid('apply-coupon'));
  await waitFor(
    page,
    '[data-testid="verdict"]:not([data-state="pending"]):not([data-state="idle"])',
    `a verdict on ${code}`,
  );
}

/** What the engine's status() says now (undefined `persisted` as 'unknown': WebDriver turns undefined into null). */
export interface StatusNow {
  phase: string;
  lastError: { code: string; message: string } | null;
  persisted: boolean | 'unknown';
}

/** The engine's status() now, through the demo's `shopLookup` (the page's own handle on the engine). */
export function statusOf(page: EnginePage): Promise<StatusNow> {
  type Status = { phase: string; lastError: { code: string; message: string } | null; persisted?: boolean };
  return page.evaluate(
    () =>
      new Promise<StatusNow>((resolve) => {
        const lookup = (
          globalThis as { shopLookup?: { status(): { subscribe(fn: (s: Status) => void): { unsubscribe(): void } } } }
        ).shopLookup!;
        // status() emits its current value at once
        const sub = lookup.status().subscribe((s) => {
          const lastError = s.lastError ? { code: s.lastError.code, message: s.lastError.message } : null;
          resolve({ phase: s.phase, lastError, persisted: s.persisted === undefined ? 'unknown' : s.persisted });
          queueMicrotask(() => sub.unsubscribe());
        });
      }),
  );
}

/** The verdict's state attribute (ok, rejected, error). */
export const verdictState = (page: EnginePage) => attrOf(page, tid('verdict'), 'data-state');

/** Marks the document, so a test can tell later that no reload happened (true while it is the same document). */
export const markDocument = (page: EnginePage) =>
  page.evaluate(() => void Object.assign(window, { __sameDocument: true }));
export const sameDocument = (page: EnginePage) =>
  page.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument === true);

/**
 * Who runs the engine: the client id holding the tab's leader lock (Web Locks), and the page's own (a lock the page
 * takes itself). Different ids: the engine runs in a worker of the page (connectEngine's module worker; with
 * `worker: false` the page would hold it). Driver-independent, so the same on every engine (only some drivers can
 * list a page's workers).
 */
export function lockHolders(page: EnginePage): Promise<{ page: string | null; engine: string | null }> {
  return page.evaluate(async () => {
    const mine = await navigator.locks.request('e2e-page-client', async () => {
      const held = (await navigator.locks.query()).held ?? [];
      return held.find((l) => l.name === 'e2e-page-client')?.clientId ?? null;
    });
    const held = (await navigator.locks.query()).held ?? [];
    return { page: mine, engine: held.find((l) => /^shop-lookup:.*:leader$/.test(l.name ?? ''))?.clientId ?? null };
  });
}

/**
 * Reads rows of an object store of the page's IndexedDB directly (no Dexie, no shop-lookup): the first five, or the
 * one under `key` (`rows` empty when there is none). A database that does not exist is seen by its upgrade, which is
 * aborted so that reading never creates it.
 */
export function readIndexedDb(page: EnginePage, dbName: string, store: string, key?: string) {
  return page.evaluate(
    async ({ dbName, store, key }) => {
      const db = await new Promise<IDBDatabase | null>((resolve, reject) => {
        const req = indexedDB.open(dbName);
        req.onupgradeneeded = () => req.transaction!.abort();
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => (req.error?.name === 'AbortError' ? resolve(null) : reject(req.error));
      });
      if (!db) return { exists: false, rows: null as unknown[] | null, count: 0 };
      try {
        const os = db.transaction(store).objectStore(store);
        const ask = <T>(req: IDBRequest<T>) =>
          new Promise<T>((resolve, reject) => {
            req.onsuccess = () => resolve(req.result);
            req.onerror = () => reject(req.error);
          });
        const count = await ask(os.count());
        // a missing key is no row (not [undefined]: WebKit's WebDriver sends undefined back as null)
        const one = key === undefined ? undefined : await ask(os.get(key));
        const rows = key === undefined ? await ask(os.getAll(null, 5)) : one === undefined ? [] : [one];
        return { exists: true, rows: rows as unknown[], count };
      } finally {
        db.close();
      }
    },
    { dbName, store, key },
  );
}
