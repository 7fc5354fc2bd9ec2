// A Vite + React app (test/consumers/react-app) installs the packed tarball, pastes the README's React components
// (ShopWidgets.jsx) and its "Testing your app" suite (CouponField.test.jsx), then:
// - builds with Vite and runs in headless Chromium: options and a coupon online, a coupon changed in the API shows
//   without a reload, the same data offline, the docs' Suspense card (CouponCard.jsx: useSuspenseLookup) suspended
//   until its coupon answers, and no lookup subscription left open after the widgets unmount;
// - runs its own vitest suite: jsdom, the MSW handlers of @shop-lookup/mock-server/msw (installed along, as the README
//   says for tests), worker: false, fake-indexeddb.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { bundleText, pageErrors, readmeExample, serveApp, timed, useBrowserApp } from './harness';

const ctx = useBrowserApp(
  'react-app',
  'react.test.ts',
  async () => ({
    'src/ShopWidgets.jsx': await readmeExample('ShopWidgets.jsx'),
    'src/CouponField.test.jsx': await readmeExample('CouponField.test.jsx'),
    'src/CouponCard.jsx': await readmeExample('CouponCard.jsx', 'docs/embedding.md'),
  }),
  (t) => [t.shopLookup, t.mockServer],
);

const sync = (page: Page) =>
  page.evaluate(() => (window as any).consumerTest.sync()) as Promise<{ ok: boolean; errors: { code: string }[] }>;
const openSubscriptions = (page: Page) =>
  page.evaluate(() => (window as any).consumerTest.openSubscriptions()) as Promise<number>;
const outputText = (page: Page) => page.evaluate(() => document.querySelector('output')?.textContent ?? '');

describe('a Vite + React app that uses shop-lookup/react from the packed tarball', { timeout: 240_000 }, () => {
  it('in Chromium: options and a coupon online, a coupon change shows without a reload, the same offline; unmounting leaves no subscription open', async () => {
    const { app, api, browser } = ctx;
    await timed('vite build', () => app.run('node_modules/.bin/vite', ['build', '--logLevel', 'warn']));
    const dist = join(app.dir, 'dist');
    expect(await bundleText(dist)).not.toMatch(/node:http|startMockShopApi|createMockShopApiMsw/);
    const site = await serveApp(dist, api.proxy);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const errors = pageErrors(page);
      await timed('browser run', async () => {
        await page.goto(site.url);
        await page.waitForFunction(() => 'consumerTest' in window, null, { timeout: 60_000 });
        expect(await sync(page), `sync() online; page errors: ${errors.join(' | ')}`).toMatchObject({ ok: true });

        // Suspense: the card showed its fallback until FIXED3000 answered, then the coupon
        const fixed = api.mock.data.coupons.find((c) => c.coupon_code === 'FIXED3000');
        await page.waitForFunction(
          (name) => document.querySelector('#suspense-coupon')?.textContent === name,
          String(fixed?.name),
          { timeout: 30_000 },
        );

        // online: the option picker and an applied coupon
        await page.waitForFunction(() => document.querySelectorAll('fieldset select option').length > 0, null, {
          timeout: 30_000,
        });
        await page.fill('input[name=code]', 'WELCOME10');
        await page.click('form button');
        await page.waitForFunction(() => /10% 할인/.test(document.querySelector('output')?.textContent ?? ''), null, {
          timeout: 30_000,
        });
        expect(await page.getAttribute('output', 'data-offline')).toBe('false');

        // the coupon changes in the API: the next sync shows it in the mounted field, no reload
        await page.evaluate(() => ((window as any).loadedOnce = true));
        const welcome = api.mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10');
        api.mock.upsertCoupon({ ...welcome, apply_sale_percent: 15 });
        expect(await sync(page)).toMatchObject({ ok: true });
        await page.waitForFunction(() => /15% 할인/.test(document.querySelector('output')?.textContent ?? ''), null, {
          timeout: 30_000,
        });
        expect(await page.evaluate(() => (window as any).loadedOnce)).toBe(true);

        // offline: the sync fails and says why; the same data stays on screen, marked offline
        await context.setOffline(true);
        const offline = await sync(page);
        expect(offline.ok).toBe(false);
        expect(offline.errors[0]?.code).toBe('network_error');
        await page.waitForFunction(
          () => document.querySelector('output')?.getAttribute('data-offline') === 'true',
          null,
          { timeout: 30_000 },
        );
        expect(await outputText(page)).toMatch(/15% 할인 \(as of/);
        await page.waitForFunction(
          () => document.querySelector('fieldset')?.getAttribute('data-offline') === 'true',
          null,
          { timeout: 30_000 },
        );
        expect(await page.locator('fieldset select option').count()).toBeGreaterThan(0);
        await page.waitForFunction(() => document.querySelector('#sync')?.textContent === 'offline', null, {
          timeout: 30_000,
        });

        await page.waitForFunction(
          () => document.querySelector('#suspense-coupon')?.getAttribute('data-offline') === 'true',
          null,
          { timeout: 30_000 },
        );

        // unmount: every hook released its subscription (status, options, coupon and the Suspense card's were open;
        // the Suspense card's a few seconds later, as it may be a render that suspended and comes back)
        expect(await openSubscriptions(page)).toBe(4);
        await page.click('#toggle');
        await page.waitForFunction(() => !document.querySelector('#widgets'));
        await page.waitForFunction(() => (window as any).consumerTest.openSubscriptions() === 0, null, {
          timeout: 30_000,
        });
      });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await site.close();
    }
  });

  it("the app's own vitest suite passes: a component against the MSW handlers in jsdom, worker: false, fake-indexeddb", async () => {
    // the app's vitest is a process of its own: none of this run's vitest state leaks into it
    const env = Object.fromEntries(
      Object.keys(process.env)
        .filter((k) => /^(VITEST|TEST$|NODE_ENV$)/.test(k))
        .map((k) => [k, '']),
    );
    const { stdout } = await timed('app vitest', () =>
      ctx.app.run('node_modules/.bin/vitest', ['run', '--reporter=verbose', '--no-color'], { env }),
    );
    expect(stdout).toMatch(/src\/CouponField\.test\.jsx/);
    expect(stdout).toMatch(/Tests\s+4 passed \(4\)/);
  });
});
