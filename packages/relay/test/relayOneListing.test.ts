// One listing per shop at any time across relay instances, whatever the refresh interval (issue 22, item 3): two
// relay instances on a real redis-server, the first one's listing held at the mock (page 2) while the relays' clock
// says it has run for two intervals. The second instance's due refresh waits for that listing instead of starting
// another one, and its refresh() resolves when that listing commits, counting it (no second listing).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createShopRelay, type ShopRelay } from '../src';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';

const INTERVAL_MS = 60_000;
let redis: RedisServer;
let api: MockShopApi;
let clock = Date.now();
let shops = 0;
const relays: ShopRelay[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  for (const relay of relays.splice(0)) await relay.close();
  await api.close();
});

/** A relay instance of the test's shop on the shared Redis, on the test's clock (so its leases outlive the test). */
function instance(shopId: string): ShopRelay {
  const relay = createShopRelay({
    key: 'demo-key',
    secret: 'demo-secret',
    target: api.url,
    redis: redis.url,
    shopId,
    public: true,
    rateLimits: false,
    refreshIntervalMs: INTERVAL_MS,
    leaseMs: 10 * INTERVAL_MS, // the clock jumps below stay within one lease: only its holder lists
    now: () => clock,
    retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 },
  });
  relays.push(relay);
  return relay;
}

const couponPages = () => api.requests.filter((r) => r.path === '/v2/shop/coupons').map((r) => Number(r.query.offset));

describe('one listing per shop across relay instances', () => {
  it("makes another instance's due refresh and refresh() wait for the listing under way and count it", async () => {
    api = await startMockShopApi({ rateLimits: false, data: { coupons: 250 } });
    const shop = `one-listing-${process.pid}-${++shops}`;
    const held = api.hold({ path: '/v2/shop/coupons', after: 1 }); // page 2 of the first listing
    const a = instance(shop);
    await held.arrived;
    clock += 2 * INTERVAL_MS; // the listing has now taken longer than the interval: the shop is due again
    const b = instance(shop);
    await b.ready; // its first run is due (nothing confirmed yet) and finds a's listing under way
    await expect.poll(async () => (await b.status()).waitingForLister).toBe(true);
    const refreshed = b.refresh().then(() => b.status());
    expect(couponPages()).toEqual([1, 2]); // b started nothing of its own
    held.release();
    const after = await refreshed;
    // b's refresh() resolved once a's listing had committed, and counted it
    expect(after.confirmedAt.coupons).toBeGreaterThan(0);
    expect(after.version).toBeGreaterThan(0);
    expect(after.waitingForLister).toBe(false);
    expect(couponPages()).toEqual([1, 2, 3]);
    expect((await a.status()).version).toBe(after.version);
  });

  it('lists anew on refresh() of the instance that lists (a change upstream may have come after its listing began)', async () => {
    api = await startMockShopApi({ rateLimits: false, data: { coupons: 250 } });
    const held = api.hold({ path: '/v2/shop/coupons', after: 1 });
    const a = instance(`one-listing-${process.pid}-${++shops}`);
    await held.arrived;
    api.upsertCoupon({ ...api.data.coupons[0], name: 'changed after page 1 was read' });
    const refreshed = a.refresh();
    held.release();
    await refreshed;
    expect(couponPages()).toEqual([1, 2, 3, 1, 2, 3]);
    expect((await a.status()).waitingForLister).toBe(false);
  });
});
