import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import { lookupFor, startMock } from './utils';

const PRODUCT = 13805;

describe('inspect(): what the engine holds and does, for the devtools', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup;

  beforeEach(async () => {
    mock = await startMock();
    lookup = lookupFor(mock, { products: [PRODUCT], shopId: 'S-demo', dbName: 'inspect-shop' });
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  it('names where the data comes from, counts the records, and gives each synced resource its last sync', async () => {
    const before = Date.now();
    expect((await lookup.sync()).ok).toBe(true);
    const i = await lookup.inspect();
    expect(i).toMatchObject({
      baseUrl: mock.url,
      shopId: 'S-demo',
      dbName: 'inspect-shop',
      coupons: 'all',
      records: {
        coupons: mock.data.coupons.length,
        issuedCoupons: 0,
        options: mock.data.products.get(PRODUCT)!.length,
      },
      trackedProducts: [PRODUCT],
      unsentUses: 0,
      journal: { count: 0, latest: [] },
    });
    expect(i.resources.map((r) => r.key)).toEqual(['coupons', `options:${PRODUCT}`]);
    for (const r of i.resources) {
      expect(r.syncedAt).toBeGreaterThanOrEqual(before - 60_000);
      expect(r).toMatchObject({ fetching: false, error: null });
    }
  });

  it('leaves the record counts out when asked to (a poll of a large till)', async () => {
    expect((await lookup.sync()).ok).toBe(true);
    const i = await lookup.inspect({ records: false });
    expect(i.records).toBeNull();
    expect(i.resources.map((r) => r.key)).toEqual(['coupons', `options:${PRODUCT}`]);
  });

  it("shows a resource's refresh failure and the journal's newest verdicts first", async () => {
    expect((await lookup.sync()).ok).toBe(true);
    mock.setDown(true);
    expect((await lookup.sync()).ok).toBe(false);
    await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000, orderId: 'first' });
    await lookup.validateCoupon(MOCK_CODES.fixedCoupon, { amount: 25000, orderId: 'second' });
    const i = await lookup.inspect();
    expect(i.journal.count).toBe(2);
    expect(i.journal.latest.map((e) => e.orderId)).toEqual(['second', 'first']);
    expect(i.resources.find((r) => r.key === 'coupons')?.error?.code).toBe('network_error');
  });
});
