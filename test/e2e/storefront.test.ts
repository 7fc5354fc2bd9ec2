// The demo's storefront page on each engine: a product page on a relay with the storefront authorize syncs the
// options, validates a code online and offline, and never receives the coupon list or an issued coupon: counted
// in the records it stored and the requests it made.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  attrOf,
  click,
  e2eSuite,
  fill,
  openStorefront,
  textOf,
  textsOf,
  tid,
  waitFor,
  waitForPage,
  waitForText,
} from './harness';
import { unreadableTexts } from './contrast';
import { boxesOf, marginsOf, overlapping } from './layout';

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
      const page = await openStorefront(context, demo);
      await waitForPage(
        page,
        'options in the picker',
        () => document.querySelectorAll('[data-testid="options"] option').length > 0,
        null,
      );

      await fill(page, tid('coupon-code'), MOCK_CODES.welcomeCoupon);
      await click(page, tid('check'));
      await waitFor(page, '[data-testid="verdict"][data-state="ok"]', 'the coupon applies online');
      expect(await attrOf(page, tid('verdict'), 'data-source')).toBe('network');

      demo.network.cut();
      await fill(page, tid('coupon-code'), MOCK_CODES.welcomeCoupon);
      await click(page, tid('check'));
      await waitFor(
        page,
        '[data-testid="verdict"][data-state="ok"][data-source="local"]',
        'the coupon applies offline, from this device',
      );
      await demo.screenshot(page, 'storefront-offline');
      demo.network.restore();

      const stored = await storedRecords(page);
      expect(stored.coupons).toEqual([MOCK_CODES.welcomeCoupon]);
      expect(stored.issued).toBe(0);
      expect(stored.options).toBeGreaterThan(0);
      const asked = demo.backend.storefrontRequests.map((u) => u.split('?')[0]!);
      expect(
        asked.filter((p) => /\/v2\/shop\/coupons$|issue-coupons|relay\/v1\/(feed|products|status)/.test(p)),
      ).toEqual([]);
      expect(asked).toContain(`/storefront-api/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`);
    } finally {
      await context.close();
    }
  });

  it("shows the product with room around it, each option's values, and its state in words", async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await openStorefront(context, demo);
      // the engine's phase names (idle, syncing, …) are not words for a shopper
      await waitForText(page, 'storefront-status', /^Up to date$/);
      // one picker per option, listing that option's values (product 13805: 색상 and 사이즈 to choose, 각인
      // 문구 to type)
      expect(await textsOf(page, '[data-testid="options"] label > span')).toEqual(['색상', '사이즈', '각인 문구']);
      expect(await textsOf(page, `${tid('option-3')} option`)).toEqual(['블랙', '화이트', '네이비']);
      expect(await textsOf(page, `${tid('option-12')} option`)).toEqual(['S', 'M', 'L']);
      expect(await attrOf(page, tid('option-14'), 'type')).toBe('text');

      await fill(page, tid('coupon-code'), MOCK_CODES.welcomeCoupon);
      await click(page, tid('check'));
      await waitFor(page, '[data-testid="verdict"][data-state="ok"]', 'the coupon applies');
      await demo.screenshot(page, 'storefront');
      // room around the content, and no part running into another
      const margins = await marginsOf(page, 'main');
      expect(margins.left, 'left margin').toBeGreaterThanOrEqual(16);
      expect(margins.right, 'right margin').toBeGreaterThanOrEqual(16);
      const parts = ['product-name', 'storefront-status', 'options', 'coupon-form', 'verdict', 'offline-ready'].map(
        tid,
      );
      expect(overlapping(await boxesOf(page, parts))).toEqual([]);
      expect(await unreadableTexts(page, 'main')).toEqual([]);

      demo.network.cut();
      await click(page, tid('check'));
      await waitFor(
        page,
        '[data-testid="storefront-status"][data-online="false"]',
        'the storefront finds out it is offline',
      );
      expect(await textOf(page, 'storefront-status')).toBe('Offline: prices and coupons from this device');
    } finally {
      demo.network.restore();
      await context.close();
    }
  });
});
