// Several engines on one database (tabs, POS screens), here in one process: the realm lock stands in for Web
// Locks, one fake IndexedDB is shared, and BroadcastChannel carries the sync status between them.
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '../mock-server';
import type { ShopLookup } from '../src';
import { realmLocks, type LockManagerLike } from '../worker/locks';
import { lookupFor, lookupWithEngine, next, startMock } from './utils';

const LIST = '/v2/shop/coupons';

describe('several engines on one database', () => {
  let mock: MockShopApi;
  let tabs: ShopLookup[];
  const idb = () => new IDBFactory();
  let shared: IDBFactory;
  let dbName: string;

  const open = (options = {}) => {
    const tab = lookupFor(mock, { indexedDB: shared, dbName, ...options });
    tabs.push(tab);
    return tab;
  };
  const leaders = async () => {
    const states = await Promise.all(tabs.map((t) => next(t.status())));
    return states.map((s) => s.leader);
  };

  beforeEach(async () => {
    mock = await startMock();
    shared = idb();
    dbName = `tabs-${Math.random()}`;
    tabs = [];
  });
  afterEach(async () => {
    await Promise.all(tabs.map((t) => t.close()));
    await mock.close();
  });

  it('lets exactly one of three engines sync, and the others answer from the shared database', async () => {
    const [a, b, c] = [open(), open(), open()];
    await next(a.status(), (s) => s.lastSyncedAt.coupons !== null, 5000);
    expect(await leaders()).toEqual([true, false, false]);
    await new Promise((r) => setTimeout(r, 200));
    expect(mock.requests.filter((r) => r.path === LIST && r.query.offset === '1')).toHaveLength(1);
    for (const follower of [b!, c!]) {
      expect((await next(follower.coupons(), (r) => r.data.length > 0)).data).toHaveLength(240);
    }
  });

  it("shows a follower the leader's changes live, and the leader's sync in its status", async () => {
    const [a, b] = [open(), open()];
    await next(a.status(), (s) => s.lastSyncedAt.coupons !== null, 5000);
    const seen: string[] = [];
    const phases: string[] = [];
    const sub = b!.coupon('WELCOME10').subscribe((r) => seen.push(String(r.data?.name)));
    const statusSub = b!.status().subscribe((s) => phases.push(s.phase));
    mock.upsertCoupon({ ...mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!, name: '다른 탭에서 바뀜' });
    await a!.sync();
    await next(b!.coupon('WELCOME10'), (r) => r.data?.name === '다른 탭에서 바뀜', 3000);
    sub.unsubscribe();
    statusSub.unsubscribe();
    expect(seen.at(-1)).toBe('다른 탭에서 바뀜');
    expect(phases).toContain('syncing');
    expect(phases.at(-1)).toBe('idle');
  });

  it('hands the sync over to another engine when the leader closes', async () => {
    const [a] = [open({ refreshIntervalMs: 300 }), open({ refreshIntervalMs: 300 }), open({ refreshIntervalMs: 300 })];
    await next(a!.status(), (s) => s.lastSyncedAt.coupons !== null, 5000);
    await a!.close();
    tabs.shift();
    await new Promise((r) => setTimeout(r, 100));
    expect(await leaders()).toEqual([true, false]);
    mock.resetRequests();
    mock.upsertCoupon({ coupon_code: 'AFTER-HANDOVER', name: '넘겨받은 뒤', apply_sale_price: 100 });
    // only a full listing brings a new coupon into coupons(): the new leader's background sync did it
    const list = await next(tabs[1]!.coupons(), (r) => r.data.some((c) => c.coupon_code === 'AFTER-HANDOVER'), 3000);
    expect(list.data).toHaveLength(241);
    expect(mock.requests.filter((r) => r.path === LIST && r.query.offset === '1').length).toBeGreaterThan(0);
  });

  it("syncs the products a follower tracks in the leader's every sync, and keeps them across a reload", async () => {
    const [a, b] = [open(), open({ products: [13805] })];
    await next(a!.status(), (s) => s.lastSyncedAt.coupons !== null, 5000);
    await b!.trackProducts([13801]);
    const options = mock.data.products.get(13801)!;
    mock.setProductOptions(13801, options.map((o) => ({ ...o, name: '리더가 가져옴' })));
    mock.resetRequests();
    expect((await a!.sync()).ok).toBe(true); // the leader, which was asked for no product itself
    const listed = new Set(mock.requests.map((r) => r.path));
    expect(listed).toContain('/v2/shop/products/13801/options');
    expect(listed).toContain('/v2/shop/products/13805/options');
    const seen = await next(b!.productOptions(13801), (r) => r.data.length > 0 && r.data.every((o) => o.name === '리더가 가져옴'));
    expect(seen.data.length).toBe(options.length);
    // the set is the shop's, not the tab's: an engine opened later (a reload) without products syncs them too
    await Promise.all(tabs.splice(0).map((t) => t.close()));
    const reloaded = open();
    mock.resetRequests();
    expect((await reloaded.sync()).ok).toBe(true);
    expect(new Set(mock.requests.map((r) => r.path))).toContain('/v2/shop/products/13801/options');
  });

  it('never runs two syncs at once, even when a follower is asked to sync', async () => {
    const [a, b] = [open(), open()];
    await next(a!.status(), (s) => s.lastSyncedAt.coupons !== null, 5000);
    mock.resetRequests();
    mock.inject({ delayMs: 100 }, { path: LIST, times: Infinity });
    const reports = await Promise.all([a!.sync(), b!.sync()]);
    expect(reports.every((r) => r.ok)).toBe(true);
    const pages = mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset);
    expect(pages).toEqual(['1', '2', '3', '1', '2', '3']);
  });
});

describe('closing an engine', () => {
  it('ends a scheduled sync that waits for the sync lock as a report, with no unhandled rejection', async () => {
    const mock = await startMock();
    const dbName = `closing-${Math.random()}`;
    // another engine (another tab) holds the sync lock for as long as the test wants
    let releaseLock!: () => void;
    const held = new Promise<void>((resolve) => (releaseLock = resolve));
    void realmLocks.request(`shop-lookup:${dbName}:sync`, {}, () => held);
    let waiting!: () => void;
    const asked = new Promise<void>((resolve) => (waiting = resolve));
    const locks: LockManagerLike = {
      request(name, options, callback) {
        if (name.endsWith(':sync')) waiting();
        return realmLocks.request(name, options, callback);
      },
    };
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    const lookup = lookupWithEngine(mock, { locks }, { dbName });
    try {
      await asked; // its start-up sync (scheduled, not asked for by anyone) waits for the lock
      await lookup.close();
      releaseLock();
      // unhandled rejections are told after the microtasks of a turn: give them two turns
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      releaseLock();
      lookup.dispose();
      await mock.close();
    }
  });
});
