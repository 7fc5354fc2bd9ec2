import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import { confirmed, lookupFor, next, startMock } from './utils';

const PRODUCT = 13805; // option no 12 has code "SIZE"

describe('refresh(target): one lookup asked for again, as a query refetch', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup;

  beforeEach(async () => {
    mock = await startMock();
    lookup = lookupFor(mock, { products: [PRODUCT] });
    expect((await lookup.sync()).ok).toBe(true);
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  const paths = () => mock.requests.map((r) => r.path);

  it('asks the API for one coupon now, without a sync, and the open lookup of it updates', async () => {
    const open = lookup.coupon(MOCK_CODES.welcomeCoupon);
    expect((await confirmed(open)).data).toMatchObject({ apply_sale_percent: 10 });
    const welcome = mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!;
    mock.upsertCoupon({ ...welcome, apply_sale_percent: 15 });
    mock.resetRequests();
    const updated = next(open, (r) => (r.data as { apply_sale_percent?: number } | null)?.apply_sale_percent === 15);

    expect(await lookup.refresh({ coupon: MOCK_CODES.welcomeCoupon })).toEqual({
      ok: true,
      offline: false,
      error: null,
    });
    expect((await updated).data).toMatchObject({ apply_sale_percent: 15 });
    expect(paths()).toEqual([`/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`]);
  });

  it("refreshes a product's options, one option by number or by code, and an issued coupon, each with its own request", async () => {
    const options = lookup.productOptions(PRODUCT);
    await confirmed(options);
    const list = mock.data.products.get(PRODUCT)!;
    mock.setProductOptions(
      PRODUCT,
      list.map((o) => (Number(o.no) === 12 ? { ...o, name: 'Size (new)' } : o)),
    );
    mock.resetRequests();
    const renamed = next(options, (r) => r.data.some((o) => o.no === 12 && o.name === 'Size (new)'));
    expect(await lookup.refresh({ productNo: PRODUCT })).toMatchObject({ ok: true });
    await renamed;
    expect(await lookup.refresh({ productNo: PRODUCT, optionNo: 12 })).toMatchObject({ ok: true });
    expect(await lookup.refresh({ productNo: PRODUCT, optionCode: 'SIZE' })).toMatchObject({ ok: true });
    expect(await lookup.refresh({ issuedCoupon: MOCK_CODES.issuedUnused })).toMatchObject({ ok: true });
    expect(paths()).toEqual([
      `/v2/shop/products/${PRODUCT}/options`,
      `/v2/shop/products/${PRODUCT}/options/12`,
      `/v2/shop/products/${PRODUCT}/options/SIZE`,
      `/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`,
    ]);
  });

  it('offline, asks nothing and resolves saying so; the lookup keeps its local answer', async () => {
    mock.setDown(true);
    expect((await lookup.sync()).ok).toBe(false);
    mock.resetRequests();
    const report = await lookup.refresh({ coupon: MOCK_CODES.welcomeCoupon });
    expect(report).toMatchObject({ ok: false, offline: true, error: { code: 'network_error' } });
    expect(report.error?.message).toMatch(/^Offline: the shop API was not asked/);
    expect(paths()).toEqual([]);
    const local = await next(lookup.coupon(MOCK_CODES.welcomeCoupon), (r) => r.offline);
    expect(local.data).toMatchObject({ coupon_code: MOCK_CODES.welcomeCoupon });
  });

  it('says what the API answered when it refused, and resolves (never rejects)', async () => {
    mock.inject('permission', { path: `/v2/shop/coupons/${MOCK_CODES.fixedCoupon}`, times: Infinity });
    const failed = await lookup.refresh({ coupon: MOCK_CODES.fixedCoupon });
    expect(failed).toMatchObject({ ok: false, offline: false, error: { code: 'permission_denied' } });
  });

  it('rejects a target it cannot refresh, in words, and asks nothing', async () => {
    mock.resetRequests();
    await expect(lookup.refresh({} as never)).rejects.toMatchObject({
      code: 'bad_request',
      message: expect.stringMatching(/needs \{ coupon \}, \{ issuedCoupon \} or \{ productNo/),
    });
    await expect(lookup.refresh({ coupon: '' })).rejects.toMatchObject({ code: 'bad_request' });
    await expect(lookup.refresh({ productNo: 1.5 })).rejects.toMatchObject({ code: 'bad_request' });
    expect(paths()).toEqual([]);
  });
});
