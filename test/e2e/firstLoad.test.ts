// The demo till on first load, in headless Chromium: one full sync through the proxy and the mock API, then
// each of the six lookups on the page, compared with what the mock holds; and the engine really runs in a module
// worker on the browser's IndexedDB.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_CODES } from '../../mock-server';
import { applyCoupon, openTill, readIndexedDb, screenshot, startDemo, textOf, tid, waitForText, type Demo } from './harness';

let demo: Demo;
beforeAll(async () => {
  demo = await startDemo();
}, 120_000);
afterAll(async () => {
  await demo?.close();
}, 60_000);

/** The mock's raw record of a coupon (what the API sends). */
function mockCoupon(code: string): Record<string, unknown> {
  const c = demo.mock.data.coupons.find((row) => row.coupon_code === code);
  if (!c) throw new Error(`the mock has no coupon ${code}`);
  return c;
}

describe('demo page on first load', { timeout: 120_000 }, () => {
  it('syncs, then shows what each of the six lookups answers', async () => {
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      await screenshot(page, 'first-load');

      // 1. coupons(): every coupon of the mock, searchable
      expect(await tid(page, 'coupon-count').getAttribute('data-count')).toBe(String(demo.mock.data.coupons.length));
      await tid(page, 'coupon-search').fill(MOCK_CODES.fixedCoupon);
      await expect.poll(() => tid(page, 'coupon-row').count()).toBe(1);
      expect(await textOf(page, 'coupon-row-name')).toBe(mockCoupon(MOCK_CODES.fixedCoupon).name);
      expect(await textOf(page, 'coupon-row-discount')).toBe('₩3,000');
      await tid(page, 'coupon-search').fill('봄 세일');
      await page.locator(`[data-testid="coupon-row"][data-code="${MOCK_CODES.encodedCoupon}"]`).waitFor();

      // 2. coupon(code), with the checkout's verdict beside it
      await applyCoupon(page, MOCK_CODES.fixedCoupon, 25_000);
      await waitForText(page, 'code-coupon-name', String(mockCoupon(MOCK_CODES.fixedCoupon).name));
      expect(await textOf(page, 'code-coupon-code')).toBe(MOCK_CODES.fixedCoupon);
      expect(await textOf(page, 'code-coupon-status')).toBe('active');

      // 3. issuedCoupon(code): read through from the API, then shown with its issue fields
      const used = demo.mock.data.issuedCoupons.find((row) => row.coupon_issue_code === MOCK_CODES.issuedUsed)!;
      await applyCoupon(page, MOCK_CODES.issuedUsed, 25_000);
      await waitForText(page, 'code-issued-status', /^used/);
      expect(await textOf(page, 'code-issued-code')).toBe(MOCK_CODES.issuedUsed);
      expect(await textOf(page, 'code-issued-order')).toContain(String(used.shop_order_code));
      expect(await textOf(page, 'code-issued-name')).toBe(String(used.name));

      // 4. productOptions(13805): the three option types as a cashier picks them
      const productNo = MOCK_CODES.ambiguousProductNo;
      await tid(page, `product-tab-${productNo}`).click();
      await page.locator(`[data-testid="product-options"][data-product-no="${productNo}"] [data-testid="option-12"]`).waitFor();
      const options = demo.mock.data.products.get(productNo)!;
      expect(await tid(page, 'product-options').locator('fieldset').count()).toBe(options.length);
      const color = options.find((o) => o.type === 'color')!;
      expect(await tid(page, `option-${String(color.no)}`).getAttribute('data-type')).toBe('color');
      const colorValues = Object.entries(color.value_list as Record<string, { name: string }>);
      for (const [code, value] of colorValues) {
        await waitForText(page, `swatch-${String(color.no)}-${code}`, value.name);
      }
      expect(await tid(page, `swatch-${String(color.no)}-C01`).getAttribute('data-color')).toBe('#1c1c1c'); // 블랙
      const size = options.find((o) => o.type === 'default')!;
      const sizeValues = (size.value_list as { name: string }[]).map((v) => v.name);
      expect(await tid(page, `option-select-${String(size.no)}`).locator('option').allInnerTexts()).toEqual(['— choose —', ...sizeValues]);
      const input = options.find((o) => o.type === 'input')!;
      await tid(page, `option-input-${String(input.no)}`).waitFor();
      // required: 색상 (true) and 사이즈 ('Y'); 각인 문구 is optional
      expect(await tid(page, `option-required-${String(color.no)}`).count()).toBe(1);
      expect(await tid(page, `option-required-${String(size.no)}`).count()).toBe(1);
      expect(await tid(page, `option-required-${String(input.no)}`).count()).toBe(0);
      await tid(page, `swatch-${String(color.no)}-C02`).click();
      await tid(page, `option-select-${String(size.no)}`).selectOption('M');
      await tid(page, 'add-to-order').click();
      await waitForText(page, 'order-line', '베이직 후드 집업 (화이트 / M)');
      await screenshot(page, 'product-options');

      // 5. productOptionByNo(13805, 12) and 6. productOptionByCode(13805, '12'): two different options
      await page.locator('details.tools > summary').click();
      await tid(page, 'finder-kind').selectOption('no');
      await tid(page, 'finder-value').fill(String(MOCK_CODES.optionNo12));
      await tid(page, 'finder-go').click();
      await waitForText(page, 'finder-code', MOCK_CODES.optionNo12Code);
      expect(await textOf(page, 'finder-name')).toContain('사이즈');
      await tid(page, 'finder-kind').selectOption('code');
      await tid(page, 'finder-value').fill(MOCK_CODES.optionCode12);
      await tid(page, 'finder-go').click();
      await waitForText(page, 'finder-no', String(MOCK_CODES.optionCode12No));
      expect(await textOf(page, 'finder-name')).toContain('색상');
      expect(await textOf(page, 'finder-code')).toBe(MOCK_CODES.optionCode12);
      await screenshot(page, 'option-finder');
    } finally {
      await context.close();
    }
  });

  it('runs the engine in a module worker on the browser IndexedDB', async () => {
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      // the module worker of connectEngine (the in-thread fallback starts none)
      const worker = page.workers().find((w) => w.url().includes('/worker/worker.ts'));
      expect(worker, `workers: ${page.workers().map((w) => w.url()).join(', ')}`).toBeDefined();
      const inWorker = await worker!.evaluate(async () => ({
        isWorker: typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope === 'function' && typeof document === 'undefined',
        databases: (await indexedDB.databases()).map((d) => d.name),
      }));
      expect(inWorker).toEqual({ isWorker: true, databases: expect.arrayContaining(['shop-lookup']) });

      const { names, rows, count } = await readIndexedDb(page, 'shop-lookup', 'coupons', MOCK_CODES.welcomeCoupon);
      expect(names).toContain('shop-lookup');
      expect(count).toBe(demo.mock.data.coupons.length);
      expect((rows?.[0] as { name?: string } | undefined)?.name).toBe(mockCoupon(MOCK_CODES.welcomeCoupon).name);
      const options = await readIndexedDb(page, 'shop-lookup', 'options');
      const tracked = [13801, 13802, 13805].reduce((n, no) => n + (demo.mock.data.products.get(no)?.length ?? 0), 0);
      expect(options.count).toBe(tracked);
    } finally {
      await context.close();
    }
  });
});
