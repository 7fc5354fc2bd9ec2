// The built demo's app shell on each engine: the service worker vite-plugin-pwa builds (Workbox) precaches both
// pages and the shop-lookup worker's chunks and never an answer of the engine's servers, and a new build reaches an
// open till as docs/offline.md says: offered without a reload, taken when the cashier presses it or at the next start.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  click,
  e2eSuite,
  fill,
  markDocument,
  openStorefront,
  openTill,
  rebuildDemo,
  sameDocument,
  textOf,
  tid,
  verdictState,
  waitFor,
  waitForFirstSync,
  WAIT_MS,
  type EnginePage,
} from './harness';

/** The paths of every entry of every cache of the page's origin (Workbox adds its revision as a query: dropped). */
const cachedPaths = (page: EnginePage) =>
  page.evaluate(async () => {
    const paths: string[] = [];
    for (const name of await caches.keys()) {
      for (const request of await (await caches.open(name)).keys()) paths.push(new URL(request.url).pathname);
    }
    return paths.sort();
  });

/** Asks the service worker whether a new build was deployed, as the open till does every hour. */
const checkForUpdate = (page: EnginePage) =>
  page.evaluate(async () => {
    await (await navigator.serviceWorker.getRegistration())?.update();
  });

/**
 * Waits until the page shows `build` in its header, across the page's own reloads (no single evaluate outlives one).
 */
async function waitForBuild(page: EnginePage, build: string): Promise<void> {
  const end = Date.now() + WAIT_MS;
  let shown: string | null | undefined;
  while (Date.now() < end) {
    shown = await page
      .evaluate(() => document.querySelector('[data-testid="app-build"]')?.textContent ?? null)
      .catch(() => undefined);
    if (shown === `build ${build}`) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the page never showed build ${build}; it shows ${JSON.stringify(shown)}`);
}

const ENGINE_PATHS = /^\/(shop-api|storefront-api|__mock|__demo)(\/|$)/;

e2eSuite('the built demo app shell', { timeout: 180_000, demo: { built: true } }, (t) => {
  it("precaches both pages and the worker's chunks, never the engine's answers; the storefront reloads offline", async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const till = await openTill(context, demo);
      await applyCoupon(till, MOCK_CODES.welcomeCoupon, 32_000); // the till's relay and the checkout
      const storefront = await openStorefront(context, demo);
      await fill(storefront, tid('coupon-code'), MOCK_CODES.welcomeCoupon);
      await click(storefront, tid('check'));
      await waitFor(
        storefront,
        '[data-testid="verdict"][data-state="ok"]',
        'the coupon checked with the storefront relay',
      );

      const paths = await cachedPaths(till);
      const assets = (await readdir(join(demo.outDir!, 'assets')))
        .filter((f) => /\.(js|css)$/.test(f))
        .map((f) => `/assets/${f}`);
      expect(
        assets.filter((f) => /\/(worker|exposeEngine|createNetwork|validateCoupon)-/.test(f)).length,
      ).toBeGreaterThanOrEqual(4);
      expect(paths).toEqual(expect.arrayContaining(['/index.html', '/storefront.html', ...assets]));
      expect(paths.filter((p) => ENGINE_PATHS.test(p))).toEqual([]);
      expect(await textOf(till, 'offline-ready')).toBe(`Ready offline (${paths.length} files cached)`);

      // the storefront reloaded with no network: the page from the cache, the options and the verdict from IndexedDB
      demo.network.cut();
      await storefront.reload();
      await waitFor(
        storefront,
        '[data-testid="options"][data-synced-at]',
        'the options from IndexedDB after the reload',
      );
      await fill(storefront, tid('coupon-code'), MOCK_CODES.welcomeCoupon);
      await click(storefront, tid('check'));
      await waitFor(
        storefront,
        '[data-testid="verdict"][data-state="ok"][data-source="local"]',
        'the coupon decided from this device',
      );
      await demo.screenshot(storefront, 'storefront-reloaded-offline');
    } finally {
      demo.network.restore();
      await context.close();
    }
  });

  it('a new build is offered to an open till without a reload, and taken when pressed or at the next start', async () => {
    const { demo, engine } = t;
    const pressed = await demo.newContext();
    const restarted = await demo.newContext();
    try {
      const tills = [await openTill(pressed, demo), await openTill(restarted, demo)] as const;
      const before = (await textOf(tills[0], 'app-build')).replace(/^build /, '');
      const next = `next-${engine}-${Date.now()}`;
      await rebuildDemo(demo, next);

      // the open till finds it and offers it; it runs on, on the build it started with
      await markDocument(tills[0]);
      await checkForUpdate(tills[0]);
      await waitFor(tills[0], tid('app-update'), 'the new build offered', { state: 'visible' });
      expect(await textOf(tills[0], 'app-update')).toBe('New version ready · Reload');
      await applyCoupon(tills[0], MOCK_CODES.fixedCoupon, 25_000);
      expect(await verdictState(tills[0])).toBe('ok');
      expect(await sameDocument(tills[0])).toBe(true);
      expect(await textOf(tills[0], 'app-build')).toBe(`build ${before}`);
      await demo.screenshot(tills[0], 'app-update-offered');

      // pressed: the till reloads into the new build, which is complete offline
      await click(tills[0], tid('app-update'));
      await waitForBuild(tills[0], next);
      await waitForFirstSync(tills[0]);
      await waitFor(tills[0], '[data-testid="offline-ready"][data-state="ready"]', 'the new shell cached');
      demo.network.cut();
      await tills[0].reload();
      await waitForBuild(tills[0], next);
      await applyCoupon(tills[0], MOCK_CODES.welcomeCoupon, 32_000);
      expect(await verdictState(tills[0])).toBe('ok');
      demo.network.restore();

      // not pressed: the next start (a reload) takes it before the till starts
      await checkForUpdate(tills[1]);
      await waitFor(tills[1], tid('app-update'), 'the new build offered to the second till', { state: 'visible' });
      await tills[1].reload();
      await waitForBuild(tills[1], next);
      await waitForFirstSync(tills[1]);
      await waitFor(tills[1], tid('app-update'), 'nothing left to offer', { state: 'hidden' });
    } finally {
      demo.network.restore();
      await pressed.close();
      await restarted.close();
    }
  });
});
