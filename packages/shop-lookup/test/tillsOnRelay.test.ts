// Tills (engines with worker: false, each on its own fake IndexedDB) against the real relay (shop-lookup/relay,
// embedded store) in front of the real mock API: discovery, snapshot, 304 re-sync, live changes, shop-wide
// products, the single-item paths, status.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import { createShopRelay, type ShopRelayOptions } from '@shop-lookup/relay';
import type { ShopLookup, ShopLookupOptions } from '../src';
import { confirmed, dumpDatabase, KEY, lookupFor, next, peek, SECRET, startMock } from './utils';

const LIST = '/v2/shop/coupons';

/** A fetch that records what a till asked and what it was answered. */
function recordingFetch() {
  const log: { url: URL; status: number }[] = [];
  const fn: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    log.push({ url: new URL(String(input)), status: res.status });
    return res;
  };
  return { fn, log, feed: () => log.filter((r) => r.url.pathname.endsWith('/relay/v1/feed')) };
}

describe('tills on the relay', () => {
  let mock: MockShopApi;
  let relay: ReturnType<typeof createShopRelay>;
  let server: Server;
  let base: string;
  /** The relay unreachable: every connection is dropped. */
  let down = false;
  const tills: ShopLookup[] = [];
  const till = (options: Partial<ShopLookupOptions> = {}) => {
    const t = lookupFor({ url: base }, { auth: undefined, ...options });
    tills.push(t);
    return t;
  };
  /** Another relay behind the same address (the old one closed): a re-pointed DNS name, a restarted relay. */
  const replaceRelay = async (options: Partial<ShopRelayOptions> = {}) => {
    await relay.close();
    relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      public: true,
      rateLimits: false,
      refreshIntervalMs: 60 * 60 * 1000,
      ...options,
    });
    await relay.refresh();
  };

  beforeEach(async () => {
    mock = await startMock();
    relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      public: true,
      rateLimits: false,
      refreshIntervalMs: 60 * 60 * 1000,
    });
    server = createServer((req, res) => (down ? req.socket.destroy() : relay(req, res)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/shop-api`;
  });
  afterEach(async () => {
    down = false;
    for (const t of tills.splice(0)) await t.close();
    await relay.close();
    await new Promise((r) => server.close(r));
    await mock.close();
  });

  it('finds the relay by itself, takes its snapshot, and two tills cost one upstream listing', async () => {
    const a = recordingFetch();
    const b = recordingFetch();
    const one = till({ fetch: a.fn });
    const two = till({ fetch: b.fn });
    expect((await one.sync()).ok).toBe(true);
    expect((await two.sync()).ok).toBe(true);
    const pages = Math.ceil(mock.data.coupons.length / 100);
    expect(mock.requests.filter((r) => r.path === LIST && r.status === 200)).toHaveLength(pages);
    for (const t of [a, b]) {
      expect(t.log.some((r) => r.url.pathname.endsWith('/relay/v1') && r.status === 200)).toBe(true);
      expect(t.log.some((r) => r.url.pathname.endsWith(LIST))).toBe(false); // never paged by the till
    }
    for (const t of [one, two]) expect((await confirmed(t.coupons())).data).toHaveLength(mock.data.coupons.length);
    const s = await next(one.status(), (x) => x.source === 'relay');
    expect(s.relayVersion).toBeGreaterThan(0);
  });

  it('re-syncs with nothing changed in one request answered 304 and writes nothing', async () => {
    const f = recordingFetch();
    const t = till({ fetch: f.fn });
    expect((await t.sync()).ok).toBe(true);
    const before = f.feed().length;
    const again = await t.sync();
    expect(again).toMatchObject({ ok: true, requests: 1, written: 0, deleted: 0 });
    expect(
      f
        .feed()
        .slice(before)
        .map((r) => [r.url.searchParams.has('since'), r.status]),
    ).toEqual([[true, 304]]);
  });

  it('brings an upstream change to an open lookup of every till through the long-poll', async () => {
    const one = till();
    const two = till();
    await Promise.all([one.sync(), two.sync()]);
    const code = MOCK_CODES.welcomeCoupon;
    const seen = [one, two].map((t) => next(t.coupon(code), (r) => r.data?.name === '바뀐 이름', 10_000));
    const welcome = mock.data.coupons.find((c) => c.coupon_code === code)!;
    mock.upsertCoupon({ ...welcome, name: '바뀐 이름' });
    await relay.refresh();
    for (const r of await Promise.all(seen)) expect(r.data?.name).toBe('바뀐 이름');
  });

  it("sends tracked products to the relay and every till's feed carries their options", async () => {
    const tracking = till({ products: [13805] });
    const other = till();
    expect((await tracking.sync()).ok).toBe(true);
    const options = await next(other.productOptions(13805), (r) => r.data.length > 0 && r.syncedAt !== null, 10_000);
    expect(options.data.map((o) => o.product_no)).toContain(13805);
    await tracking.trackProducts([13801]);
    await next(other.productOptions(13801), (r) => r.data.length > 0, 10_000);
  });

  it('reads single items, checks coupons online and prefetches issued coupons through the relay', async () => {
    const t = till();
    expect((await confirmed(t.coupon(MOCK_CODES.encodedCoupon))).data?.coupon_code).toBe(MOCK_CODES.encodedCoupon);
    const v = await t.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32_000 });
    expect(v).toMatchObject({ ok: true, source: 'network' });
    expect((await t.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
    expect((await next(t.issuedCoupon(MOCK_CODES.issuedUnused))).data?.coupon_issue_code).toBe(MOCK_CODES.issuedUnused);
  });

  it('lists the API directly when baseUrl is not a relay, and says so in status()', async () => {
    const t = lookupFor(mock);
    tills.push(t);
    expect((await t.sync()).ok).toBe(true);
    expect(mock.requests.some((r) => r.path === LIST)).toBe(true);
    expect(await next(t.status(), (s) => s.source !== undefined)).toMatchObject({ source: 'direct' });
  });

  it('keeps answering while the relay cannot be reached, then catches up by changes, not by a new snapshot', async () => {
    const f = recordingFetch();
    const t = till({ fetch: f.fn });
    expect((await t.sync()).ok).toBe(true);
    const code = MOCK_CODES.fixedCoupon;
    down = true;
    const failed = await t.sync();
    expect(failed.ok).toBe(false);
    expect(failed.errors.map((e) => e.code)).toContain('network_error');
    const offline = await next(t.coupon(code), (r) => r.offline);
    expect(offline.data?.coupon_code).toBe(code);

    const fixed = mock.data.coupons.find((c) => c.coupon_code === code)!;
    mock.upsertCoupon({ ...fixed, name: '다시 연결' });
    await relay.refresh();
    down = false;
    const mark = f.feed().length;
    expect((await t.sync()).ok).toBe(true);
    expect((await next(t.coupon(code), (r) => r.data?.name === '다시 연결')).offline).toBe(false);
    const asked = f
      .feed()
      .slice(mark)
      .map((r) => r.url.searchParams);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((q) => q.has('since'))).toBe(true);
  });

  it('starts again from a new snapshot when the relay lost its history, and ends with exactly its data', async () => {
    const t = till();
    expect((await t.sync()).ok).toBe(true);
    const before = await next(t.status(), (s) => s.relayVersion !== undefined && s.relayVersion !== null);
    // a fresh relay (new in-memory store: a new handle) behind the same address, and upstream changed meanwhile
    await relay.close();
    mock.removeCoupon(MOCK_CODES.fixedCoupon);
    relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      public: true,
      rateLimits: false,
      refreshIntervalMs: 60 * 60 * 1000,
    });
    await relay.refresh();
    const report = await t.sync();
    expect(report.ok).toBe(true);
    expect((await next(t.coupon(MOCK_CODES.fixedCoupon), (r) => r.data === null)).data).toBeNull();
    expect((await confirmed(t.coupons())).data).toHaveLength(mock.data.coupons.length);
    const after = await next(t.status(), (s) => s.relayVersion !== before.relayVersion);
    expect(after.source).toBe('relay');
  });

  describe("the relay's shop", () => {
    let other: MockShopApi | null = null;
    afterEach(async () => {
      await other?.close();
      other = null;
    });

    it("refuses another shop's relay behind the same address with shop_mismatch, and writes nothing of it", async () => {
      const dbName = 'till-of-shop-a';
      const t = till({ dbName });
      expect((await t.sync()).ok).toBe(true);
      const before = await dumpDatabase(t.idb, dbName);
      // the address now leads to shop B's relay (a DNS name re-pointed, a config copied from the other shop)
      other = await startMock({ key: 'key-of-b', secret: 'secret-of-b', data: { seed: 99, coupons: 30 } });
      await relay.close();
      relay = createShopRelay({
        key: 'key-of-b',
        secret: 'secret-of-b',
        target: other.url,
        basePath: '/shop-api',
        public: true,
        rateLimits: false,
        shopId: 'shop-b',
      });
      await relay.refresh();

      // the running till: its next feed answer names shop B
      const report = await t.sync();
      expect(report.ok).toBe(false);
      expect(report.errors.map((e) => e.code)).toContain('shop_mismatch');
      expect(report.errors.find((e) => e.code === 'shop_mismatch')?.message).toContain('"shop-b"');
      expect(await dumpDatabase(t.idb, dbName)).toBe(before);
      // and from then on the whole engine refuses the database, as for a direct engine of another shop
      expect((await next(t.coupons(), (r) => r.error !== null)).error?.code).toBe('shop_mismatch');
      expect((await next(t.status(), (s) => s.lastError !== null)).lastError?.code).toBe('shop_mismatch');
      await t.close();

      // a till started later on that database: refused at discovery, before any feed request
      const f = recordingFetch();
      const restarted = till({ dbName, indexedDB: t.idb, fetch: f.fn });
      expect((await restarted.sync()).errors.map((e) => e.code)).toContain('shop_mismatch');
      expect(f.feed()).toEqual([]);
      expect(f.log.filter((r) => r.url.pathname.endsWith('/relay/v1/products'))).toEqual([]);
      expect(await dumpDatabase(t.idb, dbName)).toBe(before);
      expect((await next(restarted.coupon(MOCK_CODES.welcomeCoupon), (r) => r.error !== null)).error?.code).toBe(
        'shop_mismatch',
      );

      // clear() drops shop A's data: the database may then take shop B's relay
      await restarted.clear();
      expect((await restarted.sync()).ok).toBe(true);
      expect((await confirmed(restarted.coupons())).data).toHaveLength(other.data.coupons.length);
    });

    it("takes no relay that names another shop than the till's shopId, and the relay of that shop", async () => {
      const f = recordingFetch();
      const mine = till({ shopId: 'S-mine', fetch: f.fn });
      const refused = await mine.sync();
      expect(refused.errors.map((e) => e.code)).toEqual(['shop_mismatch']);
      expect(refused.errors[0]!.message).toContain('shopId');
      expect(f.feed()).toEqual([]);
      expect(await peek(mine.idb, `shop-lookup:S-mine`, (db) => db.coupons.count())).toBe(0);
      await mine.close();

      await replaceRelay({ shopId: 'S-mine' });
      const named = till({ shopId: 'S-mine' });
      expect((await named.sync()).ok).toBe(true);
      expect((await confirmed(named.coupons())).data).toHaveLength(mock.data.coupons.length);
    });
  });

  it("shows the relay's own state in status(): degraded with its reason and its last listing, also after a restart", async () => {
    await replaceRelay({ retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
    const dbName = 'till-degraded';
    const t = till({ dbName });
    expect((await t.sync()).ok).toBe(true);
    const healthy = await next(t.status(), (s) => s.relay !== undefined);
    const listedAt = healthy.relay!.listedAt!;
    expect(healthy.relay).toEqual({ degraded: false, error: null, listedAt });
    expect(listedAt).toBe(healthy.lastSyncedAt.coupons);

    // the relay's upstream listing fails: it still answers, from its last snapshot
    mock.setDown(true);
    await relay.refresh();
    expect(await relay.status()).toMatchObject({ degraded: true });
    const report = await t.sync();
    expect(report).toMatchObject({ ok: true, written: 0 });
    const degraded = await next(t.status(), (s) => s.relay?.degraded === true);
    expect(degraded).toMatchObject({
      phase: 'idle',
      online: true,
      relay: { degraded: true, error: expect.any(String), listedAt },
    });
    expect(degraded.relay!.error!.length).toBeGreaterThan(0);
    await t.close();

    // a till started on that database holds the degraded answer's ETag: the relay's 304 still says how it fares
    const f = recordingFetch();
    const restarted = till({ dbName, indexedDB: t.idb, fetch: f.fn });
    expect((await restarted.sync()).ok).toBe(true);
    expect(f.feed().map((r) => r.status)).toEqual([304]);
    expect((await next(restarted.status(), (s) => s.relay !== undefined)).relay).toEqual({
      degraded: true,
      error: null,
      listedAt,
    });

    // upstream back: the relay lists again, and the till hears of it
    mock.setDown(false);
    await relay.refresh();
    expect((await restarted.sync()).ok).toBe(true);
    const recovered = await next(restarted.status(), (s) => s.relay?.degraded === false);
    expect(recovered.relay!.listedAt).toBeGreaterThan(listedAt);
    expect(recovered.relay!.error).toBeNull();
  });
});
