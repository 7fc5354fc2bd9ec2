// What fake-indexeddb cannot stand in for, in real Chromium through the demo page: Dexie's liveQuery across the
// worker boundary (a sync written in the worker reaches the page's Observables), across tabs (a second tab
// sees the first tab's change), and IndexedDB persistence across reloads (data there before any network).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_CODES } from '../../mock-server';
import { applyCoupon, openTill, readIndexedDb, screenshot, startDemo, textOf, tid, waitForText, watchConsole, type Demo } from './harness';

let demo: Demo;
beforeAll(async () => {
  demo = await startDemo();
}, 120_000);
afterAll(async () => {
  await demo?.close();
}, 60_000);

function mockCoupon(code: string): Record<string, unknown> {
  const c = demo.mock.data.coupons.find((row) => row.coupon_code === code);
  if (!c) throw new Error(`the mock has no coupon ${code}`);
  return structuredClone(c);
}

describe('shop-lookup engine in real Chromium', { timeout: 120_000 }, () => {
  it('a sync in the worker reaches the Observables the page subscribed to (liveQuery across the worker boundary)', async () => {
    const context = await demo.newContext();
    const original = mockCoupon(MOCK_CODES.fixedCoupon);
    try {
      const page = await openTill(context, demo);
      await applyCoupon(page, MOCK_CODES.fixedCoupon, 25_000);
      await waitForText(page, 'code-coupon-name', String(original.name));
      await tid(page, 'coupon-search').fill(MOCK_CODES.fixedCoupon);
      await waitForText(page, 'coupon-row-name', String(original.name));
      await page.evaluate(() => Object.assign(window, { __sameDocument: true }));

      const renamed = `${String(original.name)} (가격 변경)`;
      demo.mock.upsertCoupon({ ...original, name: renamed, apply_sale_price: 4000 });
      const before = demo.mock.requests.length;
      await tid(page, 'sync-now').click();
      // both subscriptions (coupons() and coupon(code)) emit the new record, without a reload
      await waitForText(page, 'coupon-row-name', renamed);
      await waitForText(page, 'coupon-row-discount', '₩4,000');
      await waitForText(page, 'code-coupon-name', renamed);
      expect(await textOf(page, 'code-coupon-discount')).toBe('₩4,000');
      expect(await page.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
      // and it came from the worker's sync: the coupon listing was fetched again after the change
      expect(demo.mock.requests.slice(before).some((r) => r.path === '/v2/shop/coupons' && r.status === 200)).toBe(true);
    } finally {
      demo.mock.upsertCoupon(original);
      await context.close();
    }
  });

  it('a second tab sees a change made by the first without reload', async () => {
    const context = await demo.newContext();
    const original = mockCoupon(MOCK_CODES.appOnlyCoupon);
    try {
      const first = await openTill(context, demo);
      const second = await context.newPage();
      watchConsole(second);
      await second.goto(demo.url);
      const count = String(demo.mock.data.coupons.length);
      await second.locator(`[data-testid="coupon-count"][data-count="${count}"]`).waitFor();
      await tid(second, 'coupon-search').fill(MOCK_CODES.appOnlyCoupon);
      await waitForText(second, 'coupon-row-name', String(original.name));
      await second.locator('[data-testid="status"][data-phase="idle"]').waitFor();
      // the second tab cannot reach the API from now on: whatever it shows next came through the shared database
      await second.route('**/shop-api/**', (route) => route.abort('internetdisconnected'));
      await second.evaluate(() => Object.assign(window, { __sameDocument: true }));

      const renamed = `${String(original.name)} (두 번째 탭)`;
      demo.mock.upsertCoupon({ ...original, name: renamed });
      await tid(first, 'sync-now').click();
      await tid(first, 'coupon-search').fill(MOCK_CODES.appOnlyCoupon);
      await waitForText(first, 'coupon-row-name', renamed);
      await waitForText(second, 'coupon-row-name', renamed);
      expect(await second.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
      await screenshot(second, 'second-tab');
    } finally {
      demo.mock.upsertCoupon(original);
      await context.close();
    }
  });

  it('keeps the data in IndexedDB across reloads and shows it before any network answer', async () => {
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      const syncedAt = await tid(page, 'synced-coupons').getAttribute('data-at');
      const count = String(demo.mock.data.coupons.length);

      // the API is gone for this reload: nothing can come from the network
      demo.backend.setApiDown(true);
      const before = demo.mock.requests.length;
      await page.reload();
      await page.locator(`[data-testid="coupon-count"][data-count="${count}"]`).waitFor();
      expect(await tid(page, 'synced-coupons').getAttribute('data-at')).toBe(syncedAt);
      await tid(page, 'coupon-search').fill(MOCK_CODES.welcomeCoupon);
      await waitForText(page, 'coupon-row-name', '신규가입 10% 할인');
      await tid(page, `product-tab-${MOCK_CODES.ambiguousProductNo}`).click();
      await tid(page, `option-${MOCK_CODES.optionNo12}`).waitFor();
      // nothing was answered by the API (the relay in front of it may still try it: those attempts find it down)
      expect(demo.mock.requests.slice(before).filter((r) => r.status !== 0)).toEqual([]);

      const stored = await readIndexedDb(page, 'shop-lookup', 'coupons', MOCK_CODES.welcomeCoupon);
      expect(stored.count).toBe(demo.mock.data.coupons.length);
      expect((stored.rows?.[0] as { name?: string }).name).toBe('신규가입 10% 할인');
      await screenshot(page, 'reloaded-from-indexeddb');
    } finally {
      demo.backend.setApiDown(false);
      await context.close();
    }
  });
});
