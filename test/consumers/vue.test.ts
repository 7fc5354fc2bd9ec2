// A Vite + Vue 3 app (test/consumers/vue-app) installs the packed tarball, pastes the docs' CouponField.vue
// (docs/embedding.md, shop-lookup/vue), builds with Vite and runs in headless Chromium: a coupon online, a coupon
// changed in the API showing without a reload, the same data offline, and no lookup subscription left open once the
// component unmounts.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { bundleText, pageErrors, readmeExample, serveApp, timed, useBrowserApp } from './harness';

const ctx = useBrowserApp('vue-app', 'vue.test.ts', async () => ({
  'src/CouponField.vue': await readmeExample('CouponField.vue', 'docs/embedding.md'),
}));

const sync = (page: Page) =>
  page.evaluate(() => (window as any).consumerTest.sync()) as Promise<{ ok: boolean; errors: { code: string }[] }>;
const openSubscriptions = (page: Page) =>
  page.evaluate(() => (window as any).consumerTest.openSubscriptions()) as Promise<number>;
const outputText = (page: Page) => page.evaluate(() => document.querySelector('output')?.textContent ?? '');
const waitForOutput = (page: Page, pattern: RegExp) =>
  page.waitForFunction(
    (source) => new RegExp(source).test(document.querySelector('output')?.textContent ?? ''),
    pattern.source,
    {
      timeout: 30_000,
    },
  );

describe('a Vite + Vue app that uses shop-lookup/vue from the packed tarball', { timeout: 240_000 }, () => {
  it('in Chromium: a coupon online, a coupon change shows without a reload, the same offline; unmounting leaves no subscription open', async () => {
    const { app, api, browser } = ctx;
    await timed('vite build', () => app.run('node_modules/.bin/vite', ['build', '--logLevel', 'warn']));
    const dist = join(app.dir, 'dist');
    expect(await bundleText(dist)).not.toMatch(/node:http|startMockShopApi/);
    const site = await serveApp(dist, api.proxy);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const errors = pageErrors(page);
      await timed('browser run', async () => {
        await page.goto(site.url);
        await page.waitForFunction(() => 'consumerTest' in window, null, { timeout: 60_000 });
        expect(await sync(page), `sync() online; page errors: ${errors.join(' | ')}`).toMatchObject({ ok: true });

        await page.fill('input[name=code]', 'WELCOME10');
        await page.click('form button');
        await waitForOutput(page, /10% 할인/);
        expect(await page.getAttribute('output', 'data-offline')).toBe('false');

        // the coupon changes in the API: the next sync shows it in the mounted component, no reload
        await page.evaluate(() => ((window as any).loadedOnce = true));
        const welcome = api.mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10');
        api.mock.upsertCoupon({ ...welcome, apply_sale_percent: 15 });
        expect(await sync(page)).toMatchObject({ ok: true });
        await waitForOutput(page, /15% 할인/);
        expect(await page.evaluate(() => (window as any).loadedOnce)).toBe(true);
        await page.waitForFunction(() => document.querySelector('#sync')?.textContent === 'idle', null, {
          timeout: 30_000,
        });

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
        await page.waitForFunction(() => document.querySelector('#sync')?.textContent === 'offline', null, {
          timeout: 30_000,
        });

        // unmount: both composables released their subscriptions (status and coupon were open)
        expect(await openSubscriptions(page)).toBe(2);
        await page.click('#toggle');
        await page.waitForFunction(() => !document.querySelector('#widgets'));
        expect(await openSubscriptions(page)).toBe(0);
      });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await site.close();
    }
  });
});
