// End-to-end harness: the demo's own Vite dev server (demo/vite.config.ts, mock mode) started through Vite's JS
// API on a free port, headless Debian Chromium through playwright-core, a fresh browser context per test, and
// small waits on what the page shows. Screenshots go to test-results/e2e/.
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { createServer, type Plugin, type ViteDevServer } from 'vite';
import type { DemoBackend, DemoPluginApi } from '../../demo/devServer';
import type { MockShopApi } from '../../mock-server';
import { launchChromium } from '../../scripts/launch-chromium.mjs';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const artifacts = fileURLToPath(new URL('../../test-results/e2e/', import.meta.url));

/** Waits on this machine (2 slow cores, a mock with the API's real rate limits) are generous but bounded. */
export const WAIT_MS = 30_000;

export interface Demo {
  /** http://127.0.0.1:<port> of the demo's dev server. */
  url: string;
  server: ViteDevServer;
  backend: DemoBackend;
  /** The embedded mock API behind the proxy: change its data, take it down, read its request log. */
  mock: MockShopApi;
  browser: Browser;
  /** A fresh context (own storage, own service worker); closed by close(). */
  newContext(): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * No file watcher: a file edited meanwhile (by a developer, by another job) must not reload the page mid-test.
 * (An inline `server.watch: null` would be dropped when Vite merges it into the config file's settings.)
 */
function noFileWatching(): Plugin {
  return {
    name: 'e2e-no-file-watching',
    configResolved(config) {
      (config.server as { watch: unknown }).watch = null;
    },
  };
}

/**
 * Starts the demo server in mock mode and Chromium. `source: 'direct'`: the bare credential proxy at /shop-api
 * instead of the relay (tests of the till's own page-by-page listing).
 */
export async function startDemo(options: { source?: 'relay' | 'direct' } = {}): Promise<Demo> {
  // mock mode whatever the developer's shell says
  process.env.SHOP_API_KEY = '';
  process.env.SHOP_API_SECRET = '';
  process.env.SHOP_PRODUCTS = '';
  process.env.SHOP_DEMO_SOURCE = options.source ?? 'relay';
  const server = await createServer({
    configFile: `${repoRoot}demo/vite.config.ts`,
    configLoader: 'runner',
    // one dependency cache per vitest pool slot: test files running side by side never optimise into one folder
    cacheDir: `${repoRoot}node_modules/.vite/demo-e2e-${process.env.VITEST_POOL_ID ?? '0'}`,
    logLevel: (process.env.E2E_VITE_LOG as 'info' | undefined) ?? 'warn',
    clearScreen: false,
    server: { port: 0, host: '127.0.0.1', strictPort: false },
    plugins: [noFileWatching()],
  });
  await server.listen();
  const address = server.httpServer?.address() as AddressInfo;
  const url = `http://127.0.0.1:${address.port}`;
  const plugin = server.config.plugins.find((p) => p.name === 'shop-lookup-demo');
  const backend = await (plugin?.api as DemoPluginApi).backend();
  if (!backend.mock) throw new Error('the demo server did not start in mock mode');
  const mock = backend.mock;

  const browser = await launchChromium();
  const contexts = new Set<BrowserContext>();
  await mkdir(artifacts, { recursive: true });

  return {
    url,
    server,
    backend,
    mock,
    browser,
    async newContext() {
      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, locale: 'ko-KR', timezoneId: 'Asia/Seoul' });
      context.setDefaultTimeout(WAIT_MS);
      contexts.add(context);
      context.on('close', () => contexts.delete(context));
      return context;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await server.close();
      await backend.close();
    },
  };
}

/** The status bar's network badge, offline / online. */
export const offlineBadge = '[data-testid="net-badge"][data-state="offline"]';
export const onlineBadge = '[data-testid="net-badge"][data-state="online"]';

/** The element with this data-testid. */
export function tid(page: Page, testid: string): Locator {
  return page.locator(`[data-testid="${testid}"]`);
}

/** Waits until the element shows `text`; on timeout, says what it showed instead. */
export async function waitForText(page: Page, testid: string, text: string | RegExp, timeout = WAIT_MS): Promise<void> {
  const el = tid(page, testid).filter({ hasText: text }).first();
  try {
    await el.waitFor({ state: 'visible', timeout });
  } catch {
    const shown = await tid(page, testid).allInnerTexts().catch(() => ['(page gone)']);
    throw new Error(`[data-testid="${testid}"] never showed ${String(text)}; it shows: ${JSON.stringify(shown)}`);
  }
}

/** Waits until `selector` matches; on timeout, says what was awaited and what the status bar showed. */
export async function waitUntil(page: Page, selector: string, what: string, timeout = WAIT_MS): Promise<void> {
  try {
    await page.locator(selector).first().waitFor({ state: 'attached', timeout });
  } catch {
    const status = await tid(page, 'status').innerText().catch(() => '(page gone)');
    throw new Error(`${what}: ${selector} did not appear within ${timeout} ms; the status bar shows ${JSON.stringify(status)}`);
  }
}

/** The trimmed text of the (first) element with this data-testid. */
export async function textOf(page: Page, testid: string): Promise<string> {
  return (await tid(page, testid).first().innerText()).trim();
}

/** Opens the till and waits until the app shell is cached and a full sync (coupons and options) is done. */
export async function openTill(context: BrowserContext, demo: Demo): Promise<Page> {
  const page = await context.newPage();
  watchConsole(page);
  await page.goto(demo.url);
  await waitForFirstSync(page);
  await page.locator('[data-testid="offline-ready"][data-state="ready"]').waitFor({ timeout: WAIT_MS });
  return page;
}

/** Waits until the status bar shows a finished sync of coupons and options. */
export async function waitForFirstSync(page: Page): Promise<void> {
  await page.locator('[data-testid="synced-coupons"][data-at]').waitFor({ state: 'attached', timeout: WAIT_MS });
  await page.locator('[data-testid="synced-options"][data-at]').waitFor({ state: 'attached', timeout: WAIT_MS });
  await page.locator('[data-testid="status"][data-phase="idle"]').waitFor({ state: 'attached', timeout: WAIT_MS });
}

/** Page errors fail loudly in the test log (uncaught errors are a defect of the demo). */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => {
    errors.push(String(e));
    console.error(`[page error] ${String(e)}`);
  });
  return errors;
}

/**
 * Applies a coupon code at checkout. With an amount it is a new checkout: the applied coupon is removed first
 * (otherwise changing the amount re-checks it, which is one more verdict).
 */
export async function applyCoupon(page: Page, code: string, amount?: number): Promise<void> {
  if (amount !== undefined) {
    await tid(page, 'remove-coupon').click();
    await tid(page, 'order-amount').fill(String(amount));
  }
  await tid(page, 'coupon-code').fill(code);
  await tid(page, 'apply-coupon').click();
  await page.locator('[data-testid="verdict"]:not([data-state="pending"]):not([data-state="idle"])').waitFor({ timeout: WAIT_MS });
}

/** Saves a full-page screenshot as test-results/e2e/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${artifacts}${name}.png`, fullPage: true });
}

/** Reads rows of an object store of the page's IndexedDB directly (no Dexie, no shop-lookup). */
export function readIndexedDb(page: Page, dbName: string, store: string, key?: string) {
  return page.evaluate(
    async ({ dbName, store, key }: { dbName: string; store: string; key: string | undefined }) => {
      const names = (await indexedDB.databases()).map((d) => d.name);
      if (!names.includes(dbName)) return { names, rows: null as unknown[] | null, count: 0 };
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const req = indexedDB.open(dbName);
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
      try {
        const os = db.transaction(store).objectStore(store);
        const ask = <T>(req: IDBRequest<T>) =>
          new Promise<T>((resolve, reject) => {
            req.onsuccess = () => resolve(req.result);
            req.onerror = () => reject(req.error);
          });
        const count = await ask(os.count());
        const rows = key === undefined ? await ask(os.getAll(null, 5)) : [await ask(os.get(key))];
        return { names, rows: rows as unknown[], count };
      } finally {
        db.close();
      }
    },
    { dbName, store, key },
  );
}
