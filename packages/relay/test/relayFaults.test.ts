// Upstream faults the relay survives as the engine does (throttling, 5xx, dropped connections, cut-off JSON, an
// expired token, records failing their schema, a listing that does not add up), and a store that goes away: the
// relay keeps serving its last snapshot and says it is degraded.
import { describe, expect, it } from 'vitest';
import type { MockFault } from '@shop-lookup/mock-server';
import { createMemoryStore, type RelayStore, type ShopRelayOptions, type StoreHealth } from '../src';
import { parseRecords } from '@shop-lookup/shop-api';
import { relaysPerTest, type RelayFixture } from '@shop-lookup/test-kit/relayUtils';

const relays = relaysPerTest();
const listed = (coupons = 250, options: Partial<ShopRelayOptions> = {}): Promise<RelayFixture> =>
  relays.relayWith(options, { data: { coupons } }, { listed: true });

const couponsOf = async (f: RelayFixture) =>
  new Map([...(await f.snapshot()).records].filter(([k]) => k.startsWith('coupons/')).map(([k, v]) => [k.slice(8), v]));
const validCodes = (f: RelayFixture) =>
  parseRecords('coupon', f.api.data.coupons, 'data')
    .records.map((c) => c.coupon_code)
    .sort();

/** Changes the API's data: one coupon renamed, one removed. Returns their codes. */
function changeApi(f: RelayFixture): { renamed: string; removed: string } {
  const renamed = String(f.api.data.coupons[120]!.coupon_code);
  const removed = String(f.api.data.coupons[130]!.coupon_code);
  f.api.upsertCoupon({ ...f.api.data.coupons[120], name: 'renamed upstream' });
  f.api.removeCoupon(removed);
  return { renamed, removed };
}

describe('relay under upstream faults', () => {
  it.each<MockFault>(['throttle', 'http500', 'code-19', 'truncated-json', 'drop'])(
    'survives %s on a list page and ends with exactly the API data',
    async (fault) => {
      const f = await listed();
      const { renamed, removed } = changeApi(f);
      f.api.inject(fault, { path: '/v2/shop/coupons', after: 1 });
      await f.relay.refresh();
      expect(f.api.requests.some((r) => r.fault === (fault === 'drop' ? 'drop' : fault))).toBe(true);
      const coupons = await couponsOf(f);
      expect([...coupons.keys()].sort()).toEqual(validCodes(f));
      expect(coupons.has(removed)).toBe(false);
      expect((coupons.get(renamed) as { name: string }).name).toBe('renamed upstream');
      expect((await f.relay.status()).error).toBeNull();
    },
  );

  it('renews an expired token once and lists on', async () => {
    const f = await listed();
    const auths = () => f.api.requests.filter((r) => r.path === '/v2/auth').length;
    const before = auths();
    f.api.expireTokens();
    const { renamed } = changeApi(f);
    await f.relay.refresh();
    expect(auths()).toBe(before + 1);
    expect(((await couponsOf(f)).get(renamed) as { name: string }).name).toBe('renamed upstream');
  });

  it('keeps the good copy of a record that fails its schema, and still applies the other changes', async () => {
    const f = await listed();
    const before = await couponsOf(f);
    const malformed = String(f.api.data.coupons[50]!.coupon_code); // the middle row of page 1
    expect(before.get(malformed)).toBeDefined();
    const { removed } = changeApi(f);
    f.api.inject('malformed-record', { path: '/v2/shop/coupons', times: 1 });
    await f.relay.refresh();
    const after = await couponsOf(f);
    expect(after.get(malformed)).toEqual(before.get(malformed));
    expect(after.has(removed)).toBe(false);
  });

  it('deletes nothing when a rejected record has no readable key, but applies the rest', async () => {
    const f = await listed();
    const { renamed, removed } = changeApi(f);
    f.api.data.coupons.push({ name: 'a coupon without its code' });
    await f.relay.refresh();
    const after = await couponsOf(f);
    expect(after.has(removed)).toBe(true);
    expect((after.get(renamed) as { name: string }).name).toBe('renamed upstream');
  });

  it('keeps the last snapshot unchanged when a listing does not add up, and says why in status', async () => {
    const f = await listed();
    const before = await f.snapshot();
    changeApi(f);
    f.api.inject('skip-rows', { path: '/v2/shop/coupons', after: 1, times: 10 });
    await f.relay.refresh();
    const after = await f.snapshot();
    expect(after.version).toBe(before.version);
    expect(after.records).toEqual(before.records);
    const status = await f.relay.status();
    expect(status.error).toMatch(/did not add up/);
    expect(status.degraded).toBe(true);
    f.api.clearFaults();
    await f.relay.refresh();
    expect([...(await couponsOf(f)).keys()].sort()).toEqual(validCodes(f));
    expect((await f.relay.status()).error).toBeNull();
  });
});

describe('relay listing pages that shift under it', () => {
  const LIST = '/v2/shop/coupons';
  const itemRequests = (f: RelayFixture) => f.api.requests.filter((r) => r.path.startsWith(`${LIST}/`)).length;

  it('keeps a coupon the shifted pages skipped and drops the one deleted after its page was read', async () => {
    const f = await listed(240); // pages of 100, 100, 40
    const deleted = String(f.api.data.coupons[5]!.coupon_code); // A: page 1
    const skipped = String(f.api.data.coupons[100]!.coupon_code); // C: first of page 2, moves onto page 1
    expect((await couponsOf(f)).has(skipped)).toBe(true);
    const page2 = f.api.hold({ path: LIST, after: 1 });
    const refreshed = f.relay.refresh();
    await page2.arrived; // page 1 was read with A on it
    f.api.removeCoupon(deleted);
    f.api.upsertCoupon({
      coupon_code: 'NEW-G',
      name: 'created mid-listing',
      status: 'progress',
      apply_sale_price: 1000,
    });
    page2.release();
    await refreshed;
    const coupons = await couponsOf(f);
    expect([coupons.has(skipped), coupons.has(deleted), coupons.has('NEW-G')]).toEqual([true, false, true]);
    expect([...coupons.keys()].sort()).toEqual(validCodes(f));
    expect((await f.relay.status()).error).toBeNull();
  });

  it('deletes a coupon once its own GET answers not found, and many by a second listing that agrees', async () => {
    const f = await listed(240);
    f.api.removeCoupon(String(f.api.data.coupons[150]!.coupon_code));
    f.api.resetRequests();
    await f.relay.refresh();
    expect(f.listCalls()).toBe(3);
    expect(itemRequests(f)).toBe(1);
    for (const c of f.api.data.coupons.slice(0, 20)) f.api.removeCoupon(String(c.coupon_code));
    f.api.resetRequests();
    await f.relay.refresh();
    expect(f.listCalls()).toBe(6);
    expect(itemRequests(f)).toBe(0);
    expect([...(await couponsOf(f)).keys()].sort()).toEqual(validCodes(f));
  });
});

/** A memory store that can be made unreachable: every read and write then fails, and its health says so. */
function breakableStore(): { store: RelayStore; setDown(down: boolean): void } {
  const inner = createMemoryStore();
  let down = false;
  let since = Date.now();
  const alwaysWorks = new Set<PropertyKey>(['kind', 'rateLimiter', 'onHeadChange', 'onHealthChange', 'close']);
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      if (name === 'health') {
        return (): StoreHealth =>
          down ? { ok: false, error: 'the test store at memory://breakable is unreachable', since } : target.health();
      }
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function' || alwaysWorks.has(name)) return value;
      return (...args: unknown[]) =>
        down ? Promise.reject(new Error('ECONNREFUSED')) : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
  return {
    store,
    setDown(value) {
      down = value;
      since = Date.now();
    },
  };
}

describe('relay with its store unreachable', () => {
  it('keeps serving its last snapshot, the lists and 304s, and says it is degraded', async () => {
    const breakable = breakableStore();
    const f = await listed(120, { store: breakable.store });
    const before = await f.snapshot();
    breakable.setDown(true);
    f.api.upsertCoupon({ ...f.api.data.coupons[3], name: 'not reachable without the store' });
    await f.relay.refresh(); // listing cannot be staged: nothing changes
    const first = await f.get('/relay/v1/feed');
    expect(first.status).toBe(200);
    expect(first.body!.relay).toEqual({ degraded: true, error: 'the test store at memory://breakable is unreachable' });
    const during = await f.snapshot();
    expect(during.records).toEqual(before.records);
    const unchanged = await f.get(`/relay/v1/feed?since=${before.version}&handle=${before.handle}`, {
      headers: { 'if-none-match': during.etag },
    });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('x-shop-relay-degraded')).toBe('true'); // a till holding this ETag learns it too
    expect(during.etag).toMatch(/\.degraded"$/); // and one holding the ETag from before gets a 200 with the reason
    const list = await f.get('/v2/shop/coupons?limit=100');
    expect(list.status).toBe(200);
    expect(list.headers.get('x-shop-relay-degraded')).toBe('true');
    expect(await f.relay.status()).toMatchObject({ degraded: true, error: expect.stringMatching(/unreachable/) });

    breakable.setDown(false);
    await f.relay.refresh();
    const status = await f.relay.status();
    expect(status).toMatchObject({ degraded: false, error: null });
    const changes = await f.get(`/relay/v1/feed?since=${before.version}&handle=${before.handle}`);
    expect(changes.body!.upserts.map((u: any) => u.record.name)).toEqual(['not reachable without the store']);
  });
});
