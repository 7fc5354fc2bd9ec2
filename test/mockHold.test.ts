// The mock's "hold until released" control: lets a test act at an exact point of a listing.
import { afterEach, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '../mock-server';

let api: MockShopApi | undefined;
afterEach(() => api?.close());

describe('mock hold', () => {
  it('counts a held request on arrival and answers it only once released', async () => {
    api = await startMockShopApi({ requireAuth: false, rateLimits: { list: 1, other: 5 } });
    const hold = api.hold({ path: /^\/v2\/shop\/coupons$/, page: 2 });
    let answered = false;
    const page1 = await fetch(`${api.url}/v2/shop/coupons?offset=1`);
    expect(page1.status).toBe(200);
    const page2 = fetch(`${api.url}/v2/shop/coupons?offset=2`).then((res) => {
      answered = true;
      return res;
    });
    const record = await hold.reached;
    expect(record.query.offset).toBe('2');
    expect(answered).toBe(false);
    // counted on arrival: the list limit of this second is used up, so another list call now is throttled
    expect((await (await fetch(`${api.url}/v2/shop/coupons?offset=3`)).json()).code).toBe(-7);
    hold.release();
    expect((await page2).status).toBe(429); // page 2 came within the second of page 1
    expect(api.requests.map((r) => r.query.offset)).toEqual(['1', '2', '3']);
  });

  it('lets requests through once released before any arrived, and close() releases a held one', async () => {
    api = await startMockShopApi({ requireAuth: false, rateLimits: false });
    api.hold({ path: '/v2/shop/coupons' }).release();
    expect((await fetch(`${api.url}/v2/shop/coupons`)).status).toBe(200);
    const hold = api.hold({ path: '/v2/shop/coupons' });
    const pending = fetch(`${api.url}/v2/shop/coupons`).then((r) => r.status, () => 'closed');
    await hold.reached;
    await api.close();
    expect([200, 'closed']).toContain(await pending);
  });
});
