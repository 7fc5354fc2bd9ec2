// The host's sync() sees the API as it is when it asks: a sync already running (the engine's own, or an earlier
// sync()) may have read the API before the change the host knows of, so the host gets one that starts after it,
// and every host call meanwhile shares that one. Driven by a held page request, not by waiting.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import type { IDBFactory } from 'fake-indexeddb';
import { confirmed, lookupFor, startMock } from './utils';

const LIST = '/v2/shop/coupons';

describe("the host's sync()", () => {
  let mock: MockShopApi;
  let lookup: (ShopLookup & { idb: IDBFactory }) | undefined;
  beforeEach(async () => {
    mock = await startMock(); // 240 coupons: pages of 100, 100, 40
  });
  afterEach(async () => {
    await lookup?.close();
    await mock.close();
  });

  const listRequests = () => mock.requests.filter((r) => r.path === LIST).length;
  const firstCoupon = () => mock.data.coupons[0]!;

  it("shows a change made while the engine's own first sync was mid-listing, past the page it changed", async () => {
    const lastPage = mock.hold({ path: LIST, after: 2 }); // the engine's own sync: page 3 waits, pages 1 and 2 are read
    lookup = lookupFor(mock);
    await lastPage.arrived;
    const code = String(firstCoupon().coupon_code);
    mock.upsertCoupon({ ...firstCoupon(), name: '바뀐 이름' }); // on page 1, read already
    const asked = lookup.sync();
    lastPage.release();
    expect(await asked).toMatchObject({ ok: true });
    expect((await confirmed(lookup.coupon(code))).data?.name).toBe('바뀐 이름');
  });

  it("joins the engine's own first sync when asked at opening, before that one began reading: one listing", async () => {
    lookup = lookupFor(mock);
    expect(await lookup.sync()).toMatchObject({ ok: true });
    expect(listRequests()).toBe(3);
  });

  it('runs one sync after the running one for every host call made meanwhile', async () => {
    lookup = lookupFor(mock);
    expect(await lookup.sync()).toMatchObject({ ok: true });
    const before = listRequests();
    const lastPage = mock.hold({ path: LIST, after: 2 });
    const first = lookup.sync();
    await lastPage.arrived;
    mock.upsertCoupon({ ...firstCoupon(), name: '바뀐 이름' });
    const [second, third] = [lookup.sync(), lookup.sync()];
    lastPage.release();
    const reports = await Promise.all([first, second, third]);
    expect(reports.map((r) => r.ok)).toEqual([true, true, true]);
    expect(reports[2]).toBe(reports[1]); // the two calls made meanwhile share one sync
    expect(listRequests() - before).toBe(6); // two listings of three pages: the running one and one after it
    expect((await confirmed(lookup.coupon(String(firstCoupon().coupon_code)))).data?.name).toBe('바뀐 이름');
  });
});
