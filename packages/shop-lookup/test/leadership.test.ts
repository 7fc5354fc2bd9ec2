// Several engines on one database (tabs, POS screens), here in one process: the realm lock stands in for Web
// Locks, one fake IndexedDB is shared, and BroadcastChannel carries the sync status between them.
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import { realmLocks, type LockManagerLike } from '../worker/tabs/locks';
import { lookupFor, lookupWithEngine, next, peek, record, startMock } from './utils';

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
    await next(a.status(), (s) => s.lastSyncedAt.coupons !== null);
    expect(await leaders()).toEqual([true, false, false]);
    // a follower answers once its claim is checked, and its scheduler decided at that very claim (not to sync)
    for (const follower of [b!, c!]) {
      expect((await next(follower.coupons(), (r) => r.data.length > 0)).data).toHaveLength(240);
    }
    expect(mock.requests.filter((r) => r.path === LIST && r.query.offset === '1')).toHaveLength(1);
  });

  it("shows a follower the leader's changes live, and the leader's sync in its status", async () => {
    const [a, b] = [open(), open()];
    await next(a.status(), (s) => s.lastSyncedAt.coupons !== null);
    const seen: string[] = [];
    const phases: string[] = [];
    const sub = b!.coupon('WELCOME10').subscribe((r) => seen.push(String(r.data?.name)));
    const statusSub = b!.status().subscribe((s) => phases.push(s.phase));
    mock.upsertCoupon({ ...mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!, name: '다른 탭에서 바뀜' });
    await a!.sync();
    await next(b!.coupon('WELCOME10'), (r) => r.data?.name === '다른 탭에서 바뀜');
    sub.unsubscribe();
    statusSub.unsubscribe();
    expect(seen.at(-1)).toBe('다른 탭에서 바뀜');
    expect(phases).toContain('syncing');
    expect(phases.at(-1)).toBe('idle');
  });

  it('hands the sync over to another engine when the leader closes', async () => {
    // the engines' clock, moved by the test: the data ages without waiting for it. The API's answers tell the same
    // time (their Date header), or the engines would take the API's word over their own clock (serverClock.ts)
    let clock = Date.now();
    const at = () => clock;
    const dated: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const headers = new Headers(res.headers);
      headers.set('date', new Date(clock).toUTCString());
      return new Response(await res.text(), { status: res.status, headers });
    };
    const engines = [0, 1, 2].map(() =>
      lookupWithEngine(mock, { indexedDB: shared, now: at, fetch: dated }, { dbName }),
    );
    tabs.push(...engines);
    const [a, b, c] = engines;
    try {
      await next(a!.status(), (s) => s.lastSyncedAt.coupons !== null);
      mock.upsertCoupon({ coupon_code: 'AFTER-HANDOVER', name: '넘겨받은 뒤', apply_sale_price: 100 });
      clock += 10 * 60 * 1000; // older than the refresh interval (5 minutes): a sync is due
      mock.resetRequests();
      await a!.close();
      tabs.shift();
      await next(b!.status(), (s) => s.leader === true); // the next in line takes the lock
      expect(await leaders()).toEqual([true, false]);
      // nobody asked: the new leader's background sync, at taking over, listed the data again
      const synced = await next(b!.status(), (s) => s.phase === 'idle' && s.lastSyncedAt.coupons === clock);
      expect(synced.leader).toBe(true);
      expect(mock.requests.filter((r) => r.path === LIST && r.query.offset === '1')).toHaveLength(1);
      // only a full listing brings a new coupon into coupons(): the follower sees it through the shared database
      const list = await next(c!.coupons(), (r) => r.data.some((x) => x.coupon_code === 'AFTER-HANDOVER'));
      expect(list.data).toHaveLength(241);
    } finally {
      await Promise.all(tabs.splice(0).map((t) => t.close()));
      for (const e of engines) e.dispose();
    }
  });

  it("syncs the products a follower tracks in the leader's every sync, and keeps them across a reload", async () => {
    const [a, b] = [open(), open({ products: [13805] })];
    await next(a!.status(), (s) => s.lastSyncedAt.coupons !== null);
    await b!.trackProducts([13801]);
    const options = mock.data.products.get(13801)!;
    mock.setProductOptions(
      13801,
      options.map((o) => ({ ...o, name: '리더가 가져옴' })),
    );
    mock.resetRequests();
    expect((await a!.sync()).ok).toBe(true); // the leader, which was asked for no product itself
    const listed = new Set(mock.requests.map((r) => r.path));
    expect(listed).toContain('/v2/shop/products/13801/options');
    expect(listed).toContain('/v2/shop/products/13805/options');
    const seen = await next(
      b!.productOptions(13801),
      (r) => r.data.length > 0 && r.data.every((o) => o.name === '리더가 가져옴'),
    );
    expect(seen.data.length).toBe(options.length);
    // the set is the shop's, not the tab's: an engine opened later (a reload) without products syncs them too
    await Promise.all(tabs.splice(0).map((t) => t.close()));
    const reloaded = open();
    mock.resetRequests();
    expect((await reloaded.sync()).ok).toBe(true);
    expect(new Set(mock.requests.map((r) => r.path))).toContain('/v2/shop/products/13801/options');
  });

  it("waits with clear() for another engine's sync to end, so none of its pages lands in the emptied database", async () => {
    const [leader] = [open()];
    await next(leader!.status(), (s) => s.lastSyncedAt.coupons !== null);
    const follower = open();
    const page2 = mock.hold({ path: LIST, after: 1 });
    const running = follower.sync();
    await page2.arrived;
    const clearing = leader!.clear();
    // the leader syncs again after its clear(): hold that listing, which comes after page 3 of the running one
    const resync = mock.hold({ path: LIST, after: 1 });
    page2.release();
    await Promise.all([running, clearing]);
    const left = await peek(shared, dbName, async (db) => ({
      coupons: await db.coupons.count(),
      confirmed: await db.meta.get('coupons'),
    }));
    expect(left).toEqual({ coupons: 0, confirmed: undefined });
    resync.release();
  });

  it("lets another shop's clear() wait for this shop's sync, and this shop's later syncs then write nothing there", async () => {
    const shop1 = open({ shopId: 'shop-1' });
    await next(shop1.status(), (s) => s.lastSyncedAt.coupons !== null);
    const page2 = mock.hold({ path: LIST, after: 1 });
    const running = shop1.sync();
    await page2.arrived;
    const shop2 = open({ shopId: 'shop-2', auth: undefined });
    expect((await next(shop2.coupon('WELCOME10'))).error?.code).toBe('shop_mismatch');
    const clearing = shop2.clear();
    page2.release();
    await Promise.all([running, clearing]);
    expect(await peek(shared, dbName, (db) => db.coupons.count())).toBe(0);
    // shop 1's engine learns the database is no longer its own: no sync, no lookup of shop 2's data
    expect(await shop1.sync()).toMatchObject({ ok: false, errors: [{ code: 'shop_mismatch' }] });
    expect((await next(shop1.coupon('WELCOME10'), (r) => r.error !== null)).error?.code).toBe('shop_mismatch');
    expect(await peek(shared, dbName, (db) => db.coupons.count())).toBe(0);
  });

  it("syncs in the background again after clear() on another shop's database", async () => {
    const shop1 = open({ shopId: 'shop-1' });
    await next(shop1.status(), (s) => s.lastSyncedAt.coupons !== null);
    await shop1.close();
    tabs.splice(0);
    const shop2 = open({ shopId: 'shop-2' }); // alone: the leader, but refused
    expect((await next(shop2.status(), (s) => s.lastError !== null)).lastError?.code).toBe('shop_mismatch');
    await shop2.clear();
    // no sync() call: the claim after clear() lets its scheduler sync the now empty database
    const synced = await next(shop2.status(), (s) => s.lastSyncedAt.coupons !== null && s.phase === 'idle');
    expect(synced.lastError).toBeNull();
  });

  it('shows a tab opened mid-sync the running sync, and that tab does not make the syncing one show idle', async () => {
    const a = open();
    await next(a.status(), (s) => s.lastSyncedAt.coupons !== null);
    const page2 = mock.hold({ path: LIST, after: 1 });
    const running = a.sync();
    await page2.arrived;
    const phasesA = record(a.status());
    const b = open();
    expect((await next(b.status(), (s) => s.phase === 'syncing')).progress?.resource).toBe('coupons');
    page2.release();
    await running;
    phasesA.stop();
    // from b's opening to the end of the sync, a never claimed to be idle
    const seen = phasesA.values.map((s) => s.phase);
    expect(seen.slice(0, seen.lastIndexOf('syncing'))).not.toContain('idle');
  });

  it("keeps a tab that cannot reach the API offline while another tab's sync reaches it", async () => {
    const a = open();
    await next(a.status(), (s) => s.lastSyncedAt.coupons !== null);
    const unreachable: typeof fetch = () =>
      Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }));
    const b = open({ fetch: unreachable });
    await b.validateCoupon('WELCOME10', { amount: 1000 }); // its own request finds no API
    expect((await next(b.status(), (s) => s.phase === 'offline')).online).toBe(false);
    await a.sync();
    const after = (await next(a.status(), (s) => s.phase === 'idle')).lastSyncedAt.coupons;
    // b has heard of the sync's end, and still goes by its own connectivity
    const heard = await next(b.status(), (s) => s.lastSyncedAt.coupons === after);
    expect(heard).toMatchObject({ online: false, phase: 'offline' });
  });

  it('never runs two syncs at once, even when a follower is asked to sync', async () => {
    const a = open();
    await next(a.status(), (s) => s.lastSyncedAt.coupons !== null);
    // the follower's locks tell when its sync asks for the sync lock, and when it gets it
    let asked: () => void = () => undefined;
    let granted = 0;
    const locks: LockManagerLike = {
      request(name, options, callback) {
        if (!name.endsWith(':sync')) return realmLocks.request(name, options, callback);
        asked();
        return realmLocks.request(name, options, () => {
          granted++;
          return callback();
        });
      },
    };
    const b = lookupWithEngine(mock, { indexedDB: shared, locks }, { dbName });
    tabs.push(b);
    try {
      expect((await next(b.status())).leader).toBe(false);
      mock.resetRequests();
      const page2 = mock.hold({ path: LIST, after: 1 });
      const first = a.sync();
      await page2.arrived; // the leader's sync is between two pages
      const waiting = new Promise<void>((resolve) => (asked = resolve));
      const second = b.sync();
      await waiting;
      // the follower's sync waits for the lock the leader's holds, and has sent nothing
      expect(granted).toBe(0);
      expect(mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset)).toEqual(['1', '2']);
      page2.release();
      const reports = await Promise.all([first, second]);
      expect(reports.every((r) => r.ok)).toBe(true);
      const pages = mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset);
      expect(pages).toEqual(['1', '2', '3', '1', '2', '3']);
    } finally {
      await Promise.all(tabs.splice(0).map((t) => t.close()));
      b.dispose();
    }
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
