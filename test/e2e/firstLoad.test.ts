// The demo till on first load, on each engine: one full sync through the relay and the mock API, then each of the
// six lookups on the page, compared with what the mock holds; and the engine really runs in a module worker on
// the browser's IndexedDB.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  attrOf,
  click,
  countOf,
  e2eSuite,
  fill,
  lockHolders,
  openTill,
  readIndexedDb,
  selectOption,
  textOf,
  textsOf,
  tid,
  waitFor,
  waitForText,
} from './harness';

e2eSuite('demo page on first load', { timeout: 120_000 }, (t) => {
  /** The mock's raw record of a coupon (what the API sends). */
  function mockCoupon(code: string): Record<string, unknown> {
    const c = t.demo.mock.data.coupons.find((row) => row.coupon_code === code);
    if (!c) throw new Error(`the mock has no coupon ${code}`);
    return c;
  }

  it('syncs, then shows what each of the six lookups answers', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      await demo.screenshot(page, 'first-load');

      // 1. coupons(): every coupon of the mock, searchable
      expect(await attrOf(page, tid('coupon-count'), 'data-count')).toBe(String(demo.mock.data.coupons.length));
      await fill(page, tid('coupon-search'), MOCK_CODES.fixedCoupon);
      await expect.poll(() => countOf(page, tid('coupon-row'))).toBe(1);
      expect(await textOf(page, 'coupon-row-name')).toBe(mockCoupon(MOCK_CODES.fixedCoupon).name);
      expect(await textOf(page, 'coupon-row-discount')).toBe('₩3,000');
      await fill(page, tid('coupon-search'), '봄 세일');
      await waitFor(
        page,
        `[data-testid="coupon-row"][data-code="${MOCK_CODES.encodedCoupon}"]`,
        'the coupon found by its name',
      );

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
      await click(page, tid(`product-tab-${productNo}`));
      const panel = `[data-testid="product-options"][data-product-no="${productNo}"]`;
      await waitFor(page, `${panel} [data-testid="option-12"]`, 'the options of the product');
      const options = demo.mock.data.products.get(productNo)!;
      expect(await countOf(page, `${tid('product-options')} fieldset`)).toBe(options.length);
      const color = options.find((o) => o.type === 'color')!;
      expect(await attrOf(page, tid(`option-${String(color.no)}`), 'data-type')).toBe('color');
      const colorValues = Object.entries(color.value_list as Record<string, { name: string }>);
      for (const [code, value] of colorValues) {
        await waitForText(page, `swatch-${String(color.no)}-${code}`, value.name);
      }
      expect(await attrOf(page, tid(`swatch-${String(color.no)}-C01`), 'data-color')).toBe('#1c1c1c'); // 블랙
      const size = options.find((o) => o.type === 'default')!;
      const sizeValues = (size.value_list as { name: string }[]).map((v) => v.name);
      expect((await textsOf(page, `${tid(`option-select-${String(size.no)}`)} option`)).map((s) => s.trim())).toEqual([
        '— choose —',
        ...sizeValues,
      ]);
      const input = options.find((o) => o.type === 'input')!;
      await waitFor(page, tid(`option-input-${String(input.no)}`), 'the text option');
      // required: 색상 (true) and 사이즈 ('Y'); 각인 문구 is optional
      expect(await countOf(page, tid(`option-required-${String(color.no)}`))).toBe(1);
      expect(await countOf(page, tid(`option-required-${String(size.no)}`))).toBe(1);
      expect(await countOf(page, tid(`option-required-${String(input.no)}`))).toBe(0);
      await click(page, tid(`swatch-${String(color.no)}-C02`));
      await selectOption(page, tid(`option-select-${String(size.no)}`), 'M');
      await click(page, tid('add-to-order'));
      await waitForText(page, 'order-line', '베이직 후드 집업 (화이트 / M)');
      await demo.screenshot(page, 'product-options');

      // 5. productOptionByNo(13805, 12) and 6. productOptionByCode(13805, '12'): two different options
      await click(page, 'details.tools > summary');
      await selectOption(page, tid('finder-kind'), 'no');
      await fill(page, tid('finder-value'), String(MOCK_CODES.optionNo12));
      await click(page, tid('finder-go'));
      await waitForText(page, 'finder-code', MOCK_CODES.optionNo12Code);
      expect(await textOf(page, 'finder-name')).toContain('사이즈');
      await selectOption(page, tid('finder-kind'), 'code');
      await fill(page, tid('finder-value'), MOCK_CODES.optionCode12);
      await click(page, tid('finder-go'));
      await waitForText(page, 'finder-no', String(MOCK_CODES.optionCode12No));
      expect(await textOf(page, 'finder-name')).toContain('색상');
      expect(await textOf(page, 'finder-code')).toBe(MOCK_CODES.optionCode12);
      await demo.screenshot(page, 'option-finder');
    } finally {
      await context.close();
    }
  });

  it('runs the engine in a module worker on the browser IndexedDB', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      // the engine holds the tab's leader lock from a client of its own: the module worker (see lockHolders)
      const clients = await lockHolders(page);
      expect(clients.engine, 'the leader lock is held').toEqual(expect.any(String));
      expect(clients.page).toEqual(expect.any(String));
      expect(clients.engine).not.toBe(clients.page);

      const { exists, rows, count } = await readIndexedDb(page, 'shop-lookup', 'coupons', MOCK_CODES.welcomeCoupon);
      expect(exists).toBe(true);
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
