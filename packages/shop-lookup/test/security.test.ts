import Dexie from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import { confirmed, dumpDatabase, KEY, lookupFor, next, SECRET, startMock } from './utils';

describe('security and isolation', () => {
  let mock: MockShopApi;
  beforeEach(async () => {
    mock = await startMock();
  });
  afterEach(async () => {
    await mock.close();
  });

  it('never stores the key, the secret or a token in IndexedDB', async () => {
    const tokens = new Set<string>();
    const spyFetch: typeof fetch = (input, init) => {
      const token = new Headers(init?.headers).get('access-token');
      if (token) tokens.add(token);
      return fetch(input, init);
    };
    const dbName = 'secrets-check';
    const lookup = lookupFor(mock, { fetch: spyFetch, dbName, products: [13805] });
    await lookup.sync();
    await next(lookup.issuedCoupon('IC-0000-OPEN'), (r) => r.data !== null);
    mock.expireTokens();
    await lookup.sync(); // a renewed token too
    await lookup.close();
    expect(tokens.size).toBe(2);
    const stored = await dumpDatabase(lookup.idb, dbName);
    expect(stored).toContain('WELCOME10'); // the dump does hold the data
    for (const secret of [KEY, SECRET, ...tokens]) expect(stored).not.toContain(secret);
  });

  it("refuses to serve one shop's database to another shop", async () => {
    const idb = new IDBFactory();
    const shopA = lookupFor(mock, { indexedDB: idb, dbName: 'till' });
    await shopA.sync();
    await shopA.close();

    const shopB = lookupFor(mock, { indexedDB: idb, dbName: 'till', auth: { key: 'other-shop-key', secret: 'x' } });
    try {
      const answer = await next(shopB.coupon('WELCOME10'));
      expect(answer.data).toBeNull();
      expect(answer.error?.code).toBe('shop_mismatch');
      expect(answer.error?.message).toMatch(/holds the data of another shop.*one dbName per shop/);
      const report = await shopB.sync();
      expect(report).toMatchObject({ ok: false, errors: [{ code: 'shop_mismatch' }] });
      await expect(shopB.validateCoupon('WELCOME10', { amount: 50000 })).rejects.toMatchObject({
        code: 'shop_mismatch',
      });
    } finally {
      await shopB.close();
    }
  });

  it('keeps two shops behind one proxy apart by shopId: no key, one base URL, one dbName', async () => {
    const idb = new IDBFactory();
    // behind a proxy: no credentials here, the same base URL for every shop; only shopId tells them apart
    const shopA = lookupFor(mock, { indexedDB: idb, dbName: 'till', auth: undefined, shopId: 'shop-a' });
    const shopB = lookupFor(mock, { indexedDB: idb, dbName: 'till', auth: undefined, shopId: 'shop-b' });
    try {
      await shopA.sync();
      const answer = await next(shopB.coupon('WELCOME10'));
      expect(answer).toMatchObject({
        data: null,
        error: { code: 'shop_mismatch', message: expect.stringContaining('"shop-a"') },
      });
      expect(await shopB.sync()).toMatchObject({ ok: false, errors: [{ code: 'shop_mismatch' }] });
    } finally {
      await shopA.close();
      await shopB.close();
    }
  });

  it('refuses a database claimed with a shopId to an engine with another token and no shopId', async () => {
    const idb = new IDBFactory();
    const shopA = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-a' });
    await shopA.sync();
    await shopA.close();
    const other = lookupFor(mock, { indexedDB: idb, dbName: 'till', auth: { accessToken: 'token-of-another-shop' } });
    try {
      expect((await next(other.coupon('WELCOME10'))).error?.code).toBe('shop_mismatch');
    } finally {
      await other.close();
    }
  });

  it('refuses an empty shopId with bad_options on every entry point, and asks the API nothing', async () => {
    const lookup = lookupFor(mock, { indexedDB: new IDBFactory(), shopId: '  ' });
    const before = mock.requests.length;
    try {
      expect(await next(lookup.coupon('WELCOME10'))).toMatchObject({
        data: null,
        error: { code: 'bad_options', message: expect.stringContaining('shopId') },
      });
      expect(await lookup.sync()).toMatchObject({ ok: false, errors: [{ code: 'bad_options' }] });
      await expect(lookup.validateCoupon('WELCOME10', { amount: 1000 })).rejects.toMatchObject({ code: 'bad_options' });
      expect(mock.requests.length).toBe(before);
    } finally {
      await lookup.close();
    }
  });

  it('names the default database after shopId, so two shops on one device get one database each', async () => {
    const idb = new IDBFactory();
    const shopA = lookupFor(mock, { indexedDB: idb, dbName: undefined, shopId: 'shop-a' });
    const shopB = lookupFor(mock, { indexedDB: idb, dbName: undefined, shopId: 'shop-b', auth: undefined });
    try {
      await shopA.sync();
      expect((await next(shopB.coupon('WELCOME10'))).error?.code).not.toBe('shop_mismatch');
      expect((await idb.databases()).map((d) => d.name).sort()).toEqual(['shop-lookup:shop-a', 'shop-lookup:shop-b']);
    } finally {
      await shopA.close();
      await shopB.close();
    }
  });

  it('makes prefetchIssuedCoupons, offlineJournal, clearOfflineJournal and trackProducts wait for the shop check, and refuse another shop', async () => {
    const idb = new IDBFactory();
    const shopA = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-a' });
    await shopA.sync();
    await shopA.close();
    const shopB = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-b' });
    try {
      mock.resetRequests();
      const report = await shopB.prefetchIssuedCoupons(['IC-0000-OPEN']);
      expect(report).toMatchObject({ ok: false, errors: [{ code: 'shop_mismatch' }] });
      expect(mock.requests).toEqual([]);
      await expect(shopB.offlineJournal()).rejects.toMatchObject({ code: 'shop_mismatch' });
      await expect(shopB.clearOfflineJournal(1)).rejects.toMatchObject({ code: 'shop_mismatch' });
      await expect(shopB.trackProducts([13805])).rejects.toMatchObject({ code: 'shop_mismatch' });
      const stored = await dumpDatabase(idb, 'till');
      expect(stored).not.toContain('IC-0000-OPEN');
    } finally {
      await shopB.close();
    }
  });

  it("stores nothing of a read-through that lands after another shop's clear() re-claimed the database", async () => {
    const idb = new IDBFactory();
    const shop1 = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-1' });
    const shop2 = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-2' });
    try {
      await shop1.sync();
      const inFlight = mock.hold({ path: '/v2/shop/issue-coupons/IC-0000-OPEN' });
      const prefetch = shop1.prefetchIssuedCoupons(['IC-0000-OPEN']);
      await inFlight.arrived;
      await shop2.clear(); // shop 2 takes the database while shop 1's answer is on its way
      inFlight.release();
      expect(await prefetch).toMatchObject({ ok: false, errors: [{ code: 'shop_mismatch' }] });
      expect(await dumpDatabase(idb, 'till')).not.toContain('IC-0000-OPEN');
    } finally {
      await shop1.close();
      await shop2.close();
    }
  });

  it('takes a database claimed before shopId existed over for the same shop, and then refuses other shop ids', async () => {
    const idb = new IDBFactory();
    const old = lookupFor(mock, { indexedDB: idb, dbName: 'till' });
    await old.sync();
    await old.close();
    const same = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-a' });
    try {
      expect((await next(same.coupon('WELCOME10'))).data?.coupon_code).toBe('WELCOME10');
    } finally {
      await same.close();
    }
    const other = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-b' });
    try {
      expect((await next(other.coupon('WELCOME10'))).error?.code).toBe('shop_mismatch');
    } finally {
      await other.close();
    }
  });

  it('refuses the codes "." and ".." instead of sending a request that fetch would move to another endpoint', async () => {
    const lookup = lookupFor(mock);
    try {
      await lookup.sync();
      mock.resetRequests();
      for (const code of ['.', '..']) {
        const coupon = await next(lookup.coupon(code));
        expect(coupon).toMatchObject({
          data: null,
          error: { code: 'bad_request', message: expect.stringContaining('cannot be "." or ".."') },
        });
        expect((await next(lookup.issuedCoupon(code))).error?.code).toBe('bad_request');
        expect((await next(lookup.productOptionByCode(13805, code))).error?.code).toBe('bad_request');
        await expect(lookup.validateCoupon(code, { amount: 1000 })).rejects.toMatchObject({ code: 'bad_request' });
        const report = await lookup.prefetchIssuedCoupons([code]);
        expect(report.ok).toBe(false);
        expect(report.errors[0]?.code).toBe('bad_request');
      }
      expect(mock.requests).toEqual([]); // nothing was asked of another endpoint (`/v2/shop/coupons/..` is `/v2/shop/`)
    } finally {
      await lookup.close();
    }
  });

  it('serves a database to the same shop reached without a key, and empties it on clear()', async () => {
    const idb = new IDBFactory();
    const shopA = lookupFor(mock, { indexedDB: idb, dbName: 'till' });
    await shopA.sync();
    await shopA.close();
    const shopB = lookupFor(mock, { indexedDB: idb, dbName: 'till', baseUrl: `${mock.url}/`, auth: undefined });
    try {
      // same API address, but no key to compare: the address decides, and it is the same shop
      const same = await next(shopB.coupon('WELCOME10'));
      expect(same.data?.coupon_code).toBe('WELCOME10');
      expect(same.error?.code).not.toBe('shop_mismatch');
      await shopB.clear();
      const empty = await next(shopB.coupons());
      expect(empty).toMatchObject({ data: [], syncedAt: null, error: null });
    } finally {
      await shopB.close();
    }
  });
  it("keeps another shop's unreconciled journal: clear() refuses until it is exported or discarded, and the refusal says so", async () => {
    const idb = new IDBFactory();
    const shopA = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-a' });
    let again: ReturnType<typeof lookupFor> | null = null;
    const shopB = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-b' });
    try {
      expect((await shopA.sync()).ok).toBe(true);
      mock.setDown(true);
      expect((await shopA.sync()).ok).toBe(false);
      expect(await shopA.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({
        ok: true,
        source: 'local',
        journaled: true,
      });
      await shopA.close();
      mock.setDown(false);

      const refused = await next(shopB.coupon('WELCOME10'), (r) => r.error?.code === 'shop_mismatch');
      expect(refused.error?.message).toMatch(
        /first export its offline journal .*offlineJournal\(\).* then call clear\(\)/,
      );
      await expect(shopB.clear()).rejects.toMatchObject({
        code: 'journal_not_empty',
        message: expect.stringMatching(/1 offline-journal entry .*nothing was cleared/),
      });
      again = lookupFor(mock, { indexedDB: idb, dbName: 'till', shopId: 'shop-a' });
      expect(await again.offlineJournal()).toMatchObject([{ code: 'WELCOME10', discount: 3200 }]);
      expect((await next(again.coupon('WELCOME10'))).data?.coupon_code).toBe('WELCOME10');
      await again.close();

      await shopB.clear({ discardJournal: true });
      expect(await shopB.offlineJournal()).toEqual([]);
      expect(await dumpDatabase(idb, 'till')).not.toContain('shop-a');
    } finally {
      await again?.close();
      await shopB.close();
    }
  });
});

describe('the store', () => {
  it('migrates a version 1 database without losing its data', async () => {
    const idb = new IDBFactory();
    const v1 = new Dexie('migrating', { indexedDB: idb, IDBKeyRange });
    v1.version(1).stores({
      coupons: 'coupon_code',
      issuedCoupons: '',
      options: '[product_no+no], [product_no+code]',
      meta: 'key',
      couponStage: 'coupon_code',
      couponPages: 'page',
    });
    await v1.table('coupons').put({ coupon_code: 'OLD1', name: '예전 쿠폰', apply_sale_price: 1000 });
    await v1.table('meta').bulkPut([{ key: 'coupons', confirmedAt: 1_700_000_000_000 }]);
    v1.close();

    const mock = await startMock();
    await mock.close(); // offline: only what the old database holds
    const lookup = lookupFor(mock, { indexedDB: idb, dbName: 'migrating', auth: undefined });
    try {
      const old = await next(lookup.coupon('OLD1'));
      expect(old).toMatchObject({ data: { coupon_code: 'OLD1', name: '예전 쿠폰' }, syncedAt: 1_700_000_000_000 });
      expect(await lookup.offlineJournal()).toEqual([]); // the table version 2 added is there
    } finally {
      await lookup.close();
    }
  });
});

describe('the store, one schema version back', () => {
  it('opens a database written by the previous schema version (5) and keeps its data and its journal rows, read with a key', async () => {
    const idb = new IDBFactory();
    // the schema as the release with version 5 declared it
    const v5 = new Dexie('previous', { indexedDB: idb, IDBKeyRange });
    v5.version(1).stores({
      coupons: 'coupon_code',
      issuedCoupons: '',
      options: '[product_no+no], [product_no+code]',
      meta: 'key',
      couponStage: 'coupon_code',
      couponPages: 'page',
    });
    v5.version(2).stores({ journal: '++id, at' });
    v5.version(3).stores({ couponHashes: 'page', listedPages: 'page, &*codes', couponPages: null });
    v5.version(5).stores({ feedStage: '[resource+key]' });
    await v5
      .table('coupons')
      .put({ coupon_code: 'OLD5', name: '버전 5 쿠폰', status: 'progress', apply_sale_price: 1000 });
    await v5.table('meta').bulkPut([{ key: 'coupons', confirmedAt: 1_700_000_000_000 }]);
    const sold = [
      {
        code: 'OLD5',
        amount: 5000,
        ok: true,
        reason: null,
        discount: 1000,
        syncedAt: 1_700_000_000_000,
        at: 1_700_000_100_000,
        kind: 'coupon',
      },
      {
        code: 'NOPE',
        amount: 7000,
        ok: false,
        reason: 'unknown_offline',
        discount: null,
        syncedAt: null,
        at: 1_700_000_200_000,
        kind: null,
      },
    ];
    await v5.table('journal').bulkAdd(sold);
    v5.close();

    const mock = await startMock();
    const lookup = lookupFor(mock, { indexedDB: idb, dbName: 'previous' });
    try {
      expect(await next(lookup.coupon('OLD5'))).toMatchObject({
        data: { coupon_code: 'OLD5', name: '버전 5 쿠폰' },
        syncedAt: 1_700_000_000_000,
      });
      const journal = await lookup.offlineJournal();
      // with what that release could not record said plainly, and a key of its id
      const context = (at: number) => ({
        couponCode: null,
        orderId: null,
        orderAt: at,
        source: 'local',
        cause: 'offline',
        overrides: [],
        shared: null,
        conflict: null,
        claim: null,
        action: 'verdict',
        released: null,
      });
      expect(journal).toEqual(sold.map((e, i) => ({ ...e, id: i + 1, key: `v5-${i + 1}`, ...context(e.at) })));
      expect((await lookup.sync()).ok).toBe(true);
      mock.setDown(true);
      expect((await lookup.sync()).ok).toBe(false);
      expect(await lookup.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({ journaled: true });
      const after = await lookup.offlineJournal();
      expect(after.map((e) => [e.id, e.code])).toEqual([
        [1, 'OLD5'],
        [2, 'NOPE'],
        [3, 'WELCOME10'],
      ]);
      expect(after[2]!.key).toMatch(/^[0-9a-f]{32}$/);
      expect((await idb.databases()).find((d) => d.name === 'previous')?.version).toBe(70);
    } finally {
      await lookup.close();
      await mock.close();
    }
  });
});

describe('background refresh', () => {
  it('refreshes every refreshIntervalMs while online', async () => {
    // the scheduler's interval under fake timers (only setInterval: IndexedDB and the network keep their own)
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const mock = await startMock();
    const lookup = lookupFor(mock, { refreshIntervalMs: 60_000 });
    try {
      await confirmed(lookup.coupon('WELCOME10'));
      const welcome = mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!;
      for (const name of ['저절로 바뀜', '또 저절로 바뀜']) {
        mock.upsertCoupon({ ...welcome, name });
        vi.advanceTimersByTime(60_000);
        const updated = await next(lookup.coupon('WELCOME10'), (r) => r.data?.name === name);
        expect(updated.fetching).toBe(false);
      }
    } finally {
      vi.useRealTimers();
      await lookup.close();
      await mock.close();
    }
  });

  it('goes offline when the API stops answering and syncs once it answers again', async () => {
    const mock = await startMock();
    const lookup = lookupFor(mock);
    try {
      await lookup.sync();
      mock.setDown(true);
      expect((await lookup.sync()).ok).toBe(false);
      expect((await next(lookup.status())).phase).toBe('offline');
      mock.upsertCoupon({ coupon_code: 'WHILE-DOWN', name: '내려간 사이', apply_sale_price: 500 });
      mock.setDown(false);
      // no call from us: the engine probes the API again on its own and syncs when it answers
      const back = await next(lookup.coupon('WHILE-DOWN'), (r) => r.data !== null && !r.offline, 8000);
      expect(back.data?.name).toBe('내려간 사이');
      expect((await next(lookup.status())).online).toBe(true);
    } finally {
      await lookup.close();
      await mock.close();
    }
  }, 15_000);
});
