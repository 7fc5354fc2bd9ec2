// The demo's storefront page on each engine: a product page on a relay with the storefront authorize syncs the
// options, validates a code online and offline, and never receives the coupon list or an issued coupon: counted
// in the records it stored and the requests it made.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import { attrOf, click, e2eSuite, fill, tid, waitFor, waitForPage } from './harness';

/** What the storefront's database holds (its own dbName), read in the page. */
function storedRecords(page: Parameters<typeof attrOf>[0]) {
  return page.evaluate(
    () =>
      new Promise<{ coupons: string[]; issued: number; options: number }>((resolve, reject) => {
        const open = indexedDB.open('shop-lookup:demo-storefront');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const tx = db.transaction(['coupons', 'issuedCoupons', 'options'], 'readonly');
          const keys = tx.objectStore('coupons').getAllKeys();
          const issued = tx.objectStore('issuedCoupons').count();
          const options = tx.objectStore('options').count();
          tx.oncomplete = () => {
            db.close();
            resolve({ coupons: (keys.result as string[]).map(String), issued: issued.result, options: options.result });
          };
        };
      }),
  );
}

e2eSuite('demo storefront', { timeout: 120_000 }, (t) => {
  it('syncs the options, validates a code online and offline, and never receives the coupon list or an issued coupon', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${demo.url}/storefront.html`);
      await waitFor(page, '[data-testid="options"][data-synced-at]', 'the options synced');
      await waitForPage(page, 'options in the picker', () => document.querySelectorAll('[data-testid="options"] option').length > 0, null);

      await fill(page, tid('coupon-code'), MOCK_CODES.welcomeCoupon);
      await click(page, tid('check'));
      await waitFor(page, '[data-testid="verdict"][data-state="ok"]', 'the coupon applies online');
      expect(await attrOf(page, tid('verdict'), 'data-source')).toBe('network');

      demo.network.cut();
      await fill(page, tid('coupon-code'), MOCK_CODES.welcomeCoupon);
      await click(page, tid('check'));
      await waitFor(page, '[data-testid="verdict"][data-state="ok"][data-source="local"]', 'the coupon applies offline, from this device');
      await demo.screenshot(page, 'storefront-offline');
      demo.network.restore();

      const stored = await storedRecords(page);
      expect(stored.coupons).toEqual([MOCK_CODES.welcomeCoupon]);
      expect(stored.issued).toBe(0);
      expect(stored.options).toBeGreaterThan(0);
      const asked = demo.backend.storefrontRequests.map((u) => u.split('?')[0]!);
      expect(asked.filter((p) => /\/v2\/shop\/coupons$|issue-coupons|relay\/v1\/(feed|products|status)/.test(p))).toEqual([]);
      expect(asked).toContain(`/storefront-api/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`);
    } finally {
      await context.close();
    }
  });
});
