// The six API paths through the relay: lists from its snapshot once listed (one upstream listing per refresh,
// whatever the number of readers), single items read through with single-flight, an engine whose baseUrl is the
// relay, and new tracked products listed at once.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, describe, expect, it } from 'vitest';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import { createShopLookup } from '../src';
import { createMemoryStore, createShopRelay } from '@shop-lookup/relay';
import { parseRecords } from '@shop-lookup/shop-api';
import { BASE, listen, relaysPerTest, startRelay, type RelayFixture } from '@shop-lookup/test-kit/relayUtils';
import { KEY, SECRET } from './utils';

const { relayWith, track } = relaysPerTest();
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const couponLists = (f: RelayFixture) => f.api.requests.filter((r) => r.path === '/v2/shop/coupons').length;
const validCodes = (f: RelayFixture) =>
  parseRecords('coupon', f.api.data.coupons, 'data')
    .records.map((c) => c.coupon_code)
    .sort();

describe('relay API paths', () => {
  it('answers the coupon list from its snapshot in the API envelope, without asking the API', async () => {
    const f = await relayWith({}, { data: { coupons: 130 } });
    await f.relay.refresh();
    const before = f.api.requests.length;
    const page1 = await f.get('/v2/shop/coupons?offset=1&limit=100');
    const page2 = await f.get('/v2/shop/coupons?offset=2&limit=100');
    expect(f.api.requests.length).toBe(before);
    expect(page1.status).toBe(200);
    expect(page1.body).toMatchObject({
      code: 200,
      data: { pagenation: { current_page: 1, total_page: 2, pagesize: 100 } },
    });
    const listed = [...page1.body!.data.list, ...page2.body!.data.list].map((c: any) => c.coupon_code).sort();
    expect(listed).toEqual(validCodes(f));
    expect(page1.body!.data.pagenation.data_count).toBe(String(listed.length));
    expect(page1.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('shares one createMemoryStore() between relays of one process (a till relay and a storefront relay): one listing serves both', async () => {
    const store = createMemoryStore();
    const till = await relayWith({ store }, { data: { coupons: 30 } });
    await till.relay.refresh();
    const listings = couponLists(till);
    const storefront = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: till.api.url,
      basePath: BASE,
      public: true,
      rateLimits: false,
      store,
    });
    closers.push(() => storefront.close());
    await storefront.ready;
    const { server, origin } = await listen((req, res) => storefront(req, res));
    closers.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const page = (await (await fetch(`${origin}${BASE}/v2/shop/coupons?offset=1&limit=100`)).json()) as {
      data: { list: { coupon_code: string }[] };
    };
    expect(page.data.list.map((c) => c.coupon_code).sort()).toEqual(validCodes(till));
    expect(couponLists(till)).toBe(listings);
  });

  it('forwards the list to the API while no complete listing exists yet', async () => {
    const f = track(await startRelay({}, { data: { coupons: 20 } }));
    // the relay's own first listing is held at the API: no snapshot yet
    const firstListing = f.api.hold({ path: '/v2/shop/coupons' });
    await f.relay.ready;
    await firstListing.arrived;
    const forwarded = await f.get('/v2/shop/coupons?offset=1&limit=7');
    expect(forwarded.status).toBe(200);
    expect(forwarded.body!.data.list).toHaveLength(7);
    expect(f.api.requests.some((r) => r.path === '/v2/shop/coupons' && r.query.limit === '7')).toBe(true);
    firstListing.release();
  });

  it('lists the API once per refresh however many clients read the feed and the list meanwhile', async () => {
    const f = await relayWith({}, { data: { coupons: 250 } });
    await f.relay.refresh();
    const pages = Math.ceil(250 / 100);
    const afterFirst = couponLists(f);
    f.api.upsertCoupon({ ...f.api.data.coupons[0], name: 'changed' });
    const readers = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0 ? f.snapshot() : f.get('/v2/shop/coupons?offset=1&limit=100'),
    );
    await Promise.all([f.relay.refresh(), ...readers]);
    expect(couponLists(f) - afterFirst).toBe(pages);
  });

  it('makes one upstream call of identical concurrent single-item requests, and reuses the answer briefly', async () => {
    const f = await relayWith({ itemCacheMs: 60_000 });
    const path = `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`;
    const hold = f.api.hold({ path });
    const asks = Array.from({ length: 6 }, () => f.get(path));
    // the first request is parked at the API; the other five are waiting on it, not on their own calls
    await expect.poll(() => f.api.requests.filter((r) => r.path === path).length).toBe(1);
    expect(hold.held).toBe(1);
    hold.release();
    const answers = await Promise.all(asks);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers[0]!.body).toMatchObject({ code: 200, data: { coupon_code: MOCK_CODES.welcomeCoupon } });
    const later = await f.get(path);
    expect(later.text).toBe(answers[0]!.text);
    expect(f.api.requests.filter((r) => r.path === path)).toHaveLength(1);
  });

  it('keeps no error answer for later requests, not even one sent with HTTP 200 (-7 in its body)', async () => {
    const f = await relayWith({ itemCacheMs: 60_000 }, { httpStatus: 'always200' });
    const path = `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`;
    f.api.inject('throttle', { path });
    const throttled = await f.get(path);
    expect(throttled).toMatchObject({ status: 200, body: { code: -7 } });
    // the next request is asked upstream again (after the throttle's pause), and its good answer is kept
    const later = await f.get(path);
    expect(later.body).toMatchObject({ code: 200, data: { coupon_code: MOCK_CODES.welcomeCoupon } });
    expect((await f.get(path)).text).toBe(later.text);
    expect(f.api.requests.filter((r) => r.path === path).map((r) => r.code)).toEqual([-7, 200]);
  });

  it('asks the API again for a single item once its short keep time is over', async () => {
    const f = await relayWith({ itemCacheMs: 0 });
    const path = `/v2/shop/issue-coupons/${encodeURIComponent(MOCK_CODES.issuedUnused)}`;
    expect((await f.get(path)).body).toMatchObject({ code: 200 });
    expect((await f.get(path)).body).toMatchObject({ code: 200 });
    expect(f.api.requests.filter((r) => r.path === `/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`)).toHaveLength(
      2,
    );
  });

  it('checks a newly asked product with the API, lists it at once and answers its options from the snapshot', async () => {
    const f = await relayWith();
    await f.relay.refresh();
    const no = MOCK_CODES.firstProductNo + 2;
    const json = { 'content-type': 'application/json' };
    const added = await f.get('/relay/v1/products', {
      method: 'POST',
      body: JSON.stringify({ products: [no] }),
      headers: json,
    });
    expect(added).toMatchObject({ status: 202, body: { products: [], pending: [no] } });
    await expect.poll(async () => (await f.relay.status()).confirmedAt[`options:${no}`]).toBeGreaterThan(0);
    const calls = () => f.api.requests.filter((r) => r.path === `/v2/shop/products/${no}/options`);
    // one look at its first option (does it exist?), then one listing
    expect(calls().map((r) => r.query.limit)).toEqual(['1', '100']);
    const answer = await f.get(`/v2/shop/products/${no}/options?limit=100`);
    expect(answer.body!.data.list.map((o: any) => o.no)).toEqual(
      f.api.data.products
        .get(no)!
        .map((o) => Number(o.no))
        .sort((a, b) => a - b),
    );
    expect(calls()).toHaveLength(2);
    expect((await f.get('/relay/v1/products')).body).toEqual({ products: [no], pending: [] });
    const snap = await f.snapshot();
    expect([...snap.records.keys()].filter((k) => k.startsWith(`options:${no}/`))).toHaveLength(
      answer.body!.data.list.length,
    );
  });

  it('serves an engine whose baseUrl is the relay from the snapshot, with no credentials on the engine', async () => {
    const f = await relayWith({}, { data: { coupons: 120 } });
    await f.relay.refresh();
    const listsBefore = couponLists(f);
    const lookup = createShopLookup({
      baseUrl: `${f.origin}${BASE}`,
      worker: false,
      indexedDB: new IDBFactory(),
      IDBKeyRange,
      rateLimits: false,
      dbName: 'relay-engine',
    });
    closers.push(() => lookup.close());
    const report = await lookup.sync();
    expect(report.ok).toBe(true);
    const coupons = await new Promise<any[]>((resolve) => {
      const sub = lookup.coupons().subscribe((r) => {
        if (r.syncedAt !== null && r.data.length > 0) {
          resolve(r.data);
          queueMicrotask(() => sub.unsubscribe());
        }
      });
    });
    expect(coupons.map((c) => c.coupon_code).sort()).toEqual(validCodes(f));
    expect(couponLists(f)).toBe(listsBefore);
  });
});
