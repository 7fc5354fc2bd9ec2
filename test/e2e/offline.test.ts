// The demo till without a network: the browser really offline (Chromium's network emulation), a reload while
// offline (the service worker's app shell), coming back online; and the page's "cut the API" switch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_CODES } from '../../mock-server';
import { applyCoupon, offlineBadge, onlineBadge, openTill, screenshot, startDemo, textOf, tid, waitForText, waitUntil, type Demo } from './harness';

let demo: Demo;
beforeAll(async () => {
  demo = await startDemo();
}, 120_000);
afterAll(async () => {
  await demo?.close();
}, 60_000);


describe('demo page offline', { timeout: 120_000 }, () => {
  it('keeps answering offline and after a reload offline, then picks up changes when back online', async () => {
    const context = await demo.newContext();
    const welcome = structuredClone(demo.mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!);
    try {
      const page = await openTill(context, demo);
      const syncedAt = await tid(page, 'synced-coupons').getAttribute('data-at');
      const count = String(demo.mock.data.coupons.length);

      await context.setOffline(true);
      await waitUntil(page, offlineBadge, 'the page shows offline when the network goes');
      await applyCoupon(page, MOCK_CODES.welcomeCoupon, 32_000);
      expect(await tid(page, 'verdict').getAttribute('data-state')).toBe('ok');
      expect(await textOf(page, 'verdict-discount')).toBe('−₩3,200');
      expect(await tid(page, 'verdict-source').getAttribute('data-source')).toBe('local');
      expect(await textOf(page, 'verdict-synced')).toMatch(/^data from (just now|\d+ min ago)$/);
      // the engine itself found out: the lookups now say their answers are local data
      await page.locator('[data-testid="coupons-meta"][data-offline="true"]').waitFor();
      expect(await tid(page, 'coupon-count').getAttribute('data-count')).toBe(count);
      expect(await textOf(page, 'last-synced')).toMatch(/Coupons synced (just now|\d+ min ago)/);
      await screenshot(page, 'offline');

      // a reload with no network: the page and the worker come from the service worker, the data from IndexedDB
      await page.reload();
      await waitUntil(page, offlineBadge, 'the page reloaded offline shows offline');
      await page.locator(`[data-testid="coupon-count"][data-count="${count}"]`).waitFor();
      expect(await tid(page, 'synced-coupons').getAttribute('data-at')).toBe(syncedAt);
      expect(page.workers().some((w) => w.url().includes('/worker/worker.ts'))).toBe(true);
      await applyCoupon(page, MOCK_CODES.welcomeCoupon, 32_000);
      expect(await tid(page, 'verdict').getAttribute('data-state')).toBe('ok');
      expect(await textOf(page, 'verdict-total')).toBe('₩28,800');
      await screenshot(page, 'offline-reloaded');

      // meanwhile the shop renames the coupon; back online, the page shows it without a reload
      const renamed = `${String(welcome.name)} (리뉴얼)`;
      demo.mock.upsertCoupon({ ...welcome, name: renamed });
      await page.evaluate(() => Object.assign(window, { __sameDocument: true }));
      await tid(page, 'coupon-search').fill(MOCK_CODES.welcomeCoupon);
      await context.setOffline(false);
      await waitUntil(page, onlineBadge, 'the page shows online again once the network is back');
      await waitForText(page, 'coupon-row-name', renamed);
      await waitForText(page, 'code-coupon-name', renamed);
      expect(await page.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
      // and a full sync ran again: "coupons synced" moves on
      await page.waitForFunction(
        (before) => Number(document.querySelector('[data-testid="synced-coupons"]')?.getAttribute('data-at')) > before,
        Number(syncedAt),
      );
      await screenshot(page, 'back-online');
    } finally {
      demo.mock.upsertCoupon(welcome);
      await context.close();
    }
  });

  it('the "cut the API" switch makes the page offline while lookups keep answering', async () => {
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      const before = demo.mock.requests.length;
      await tid(page, 'api-switch-box').locator('label.switch').click();
      await page.locator('[data-testid="api-switch-box"][data-down="true"]').waitFor();
      expect(demo.backend.apiDown).toBe(true);
      await waitUntil(page, offlineBadge, 'the page shows offline once the API is cut');
      expect(await textOf(page, 'net-badge')).toBe('Offline (API unreachable)');

      await applyCoupon(page, MOCK_CODES.fixedCoupon, 25_000);
      expect(await tid(page, 'verdict').getAttribute('data-state')).toBe('ok');
      expect(await textOf(page, 'verdict-discount')).toBe('−₩3,000');
      expect(await tid(page, 'verdict-source').getAttribute('data-source')).toBe('local');
      expect(await tid(page, 'coupon-count').getAttribute('data-count')).toBe(String(demo.mock.data.coupons.length));
      // nothing got through to the API while it was cut
      expect(demo.mock.requests.slice(before).filter((r) => r.status === 200)).toEqual([]);
      await screenshot(page, 'api-cut');

      await tid(page, 'api-switch-box').locator('label.switch').click();
      await page.locator('[data-testid="api-switch-box"][data-down="false"]').waitFor();
      await waitUntil(page, onlineBadge, 'the page shows online once the API is back');
      await waitUntil(page, '[data-testid="status"][data-phase="idle"]', 'a sync completes once the API is back');
    } finally {
      demo.backend.setApiDown(false);
      await context.close();
    }
  });
});
