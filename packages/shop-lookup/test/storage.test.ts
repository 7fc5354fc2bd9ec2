// IndexedDB failing under the engine: a full disk, a connection the browser closed, another tab's newer schema.
// The lookups keep answering from what is stored; status() says what happened in words.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import Dexie from 'dexie';
import { createShopLookup } from '../src';
import { dumpDatabase, faultyStore, KEY, lookupWithEngine, next, SECRET, startMock } from './utils';

describe('storage failures', () => {
  let mock: MockShopApi;
  let faulty: ReturnType<typeof faultyStore>;
  let lookup: ReturnType<typeof lookupWithEngine>;
  let idb: IDBFactory;

  beforeEach(async () => {
    mock = await startMock();
    faulty = faultyStore();
    idb = new IDBFactory();
    lookup = lookupWithEngine(mock, { openStore: faulty.openStore, indexedDB: idb, IDBKeyRange });
    expect((await lookup.sync()).ok).toBe(true);
  });
  afterEach(async () => {
    await lookup.close();
    lookup.dispose();
    await mock.close();
  });

  const rename = (code: string, name: string) =>
    mock.upsertCoupon({ ...mock.data.coupons.find((c) => c.coupon_code === code)!, name });

  it('reports a full disk during a sync, keeps serving the last data, and catches up once there is room', async () => {
    const before = (await next(lookup.coupon('WELCOME10'))).data!;
    rename('WELCOME10', '디스크가 찼을 때');
    faulty.failWrites('QuotaExceededError');
    const report = await lookup.sync();
    expect(report.ok).toBe(false);
    expect(report.errors.at(-1)).toMatchObject({
      code: 'quota_exceeded',
      message: expect.stringMatching(/storage for the site is full/),
    });
    const status = await next(lookup.status());
    expect(status).toMatchObject({ phase: 'error', lastError: { code: 'quota_exceeded' } });
    expect((await next(lookup.coupon('WELCOME10'))).data).toEqual(before);
    expect((await next(lookup.coupons())).data).toHaveLength(240);

    faulty.heal();
    expect((await lookup.sync()).ok).toBe(true);
    expect((await next(lookup.coupon('WELCOME10'))).data?.name).toBe('디스크가 찼을 때');
    expect((await next(lookup.status())).lastError).toBeNull();
  });

  it('never loses an offline verdict to a full disk: the verdict says so, status() shows it, and it is written once there is room', async () => {
    mock.setDown(true);
    expect((await lookup.sync()).ok).toBe(false);
    faulty.failWrites('QuotaExceededError', ['journal']);
    const first = await lookup.validateCoupon('WELCOME10', { amount: 32000 });
    expect(first).toMatchObject({ ok: true, source: 'local', journaled: false });
    const second = await lookup.validateCoupon('FIXED3000', { amount: 10000 });
    expect(second).toMatchObject({ source: 'local', journaled: false });
    const status = await next(lookup.status(), (s) => s.storage?.unsavedJournal === 2);
    expect(status.storage).toMatchObject({
      memoryOnly: false,
      error: { code: 'quota_exceeded', message: expect.stringMatching(/storage for the site is full/) },
    });

    faulty.heal();
    const third = await lookup.validateCoupon('WELCOME10', { amount: 50000 });
    expect(third).toMatchObject({ journaled: true });
    // in the order they were given, the two kept in memory first
    expect((await lookup.offlineJournal()).map((e) => [e.code, e.amount])).toEqual([
      ['WELCOME10', 32000],
      ['FIXED3000', 10000],
      ['WELCOME10', 50000],
    ]);
    expect((await next(lookup.status(), (s) => s.storage === undefined)).storage).toBeUndefined();
  });

  it('writes each offline verdict exactly once when storage takes only part of a batch (WebKit refuses each write on its own)', async () => {
    mock.setDown(true);
    expect((await lookup.sync()).ok).toBe(false);
    faulty.failWrites('QuotaExceededError', ['journal'], { perRequest: true });
    expect(await lookup.validateCoupon('WELCOME10', { amount: 1000 })).toMatchObject({ journaled: false });
    expect(await lookup.validateCoupon('WELCOME10', { amount: 2000 })).toMatchObject({ journaled: false });
    // room for one write: the first waiting entry would fit, the rest not
    faulty.failWrites('QuotaExceededError', ['journal'], { perRequest: true, accept: 1 });
    const third = await lookup.validateCoupon('WELCOME10', { amount: 3000 });
    faulty.heal();
    const fourth = await lookup.validateCoupon('WELCOME10', { amount: 4000 });
    expect(fourth).toMatchObject({ journaled: true });
    const journal = await lookup.offlineJournal();
    expect(journal.map((e) => e.amount)).toEqual([1000, 2000, 3000, 4000]);
    expect(new Set(journal.map((e) => e.key)).size).toBe(4);
    expect(third.journaled).toBe(false); // its batch was refused in part: none of it is written, all of it waits
  });

  it("remembers this till's use of an issued coupon while its entry waits for storage, and writes the use with it", async () => {
    expect((await lookup.prefetchIssuedCoupons(['IC-0000-OPEN'])).ok).toBe(true);
    mock.setDown(true);
    expect((await lookup.sync()).ok).toBe(false);
    faulty.failWrites('QuotaExceededError', ['journal']);
    expect(await lookup.validateCoupon('IC-0000-OPEN', { amount: 32000, orderId: 'F-1' })).toMatchObject({
      ok: true,
      journaled: false,
    });
    const waiting = await lookup.validateCoupon('IC-0000-OPEN', { amount: 32000, orderId: 'F-2' });
    expect(waiting).toMatchObject({
      ok: false,
      reason: 'used_on_this_till',
      detail: { earlierUse: { orderId: 'F-1', journalId: null } },
    });
    expect(waiting.ok ? '' : waiting.detail.message).toMatch(/its journal entry still waits for storage/);
    faulty.heal();
    const stored = await lookup.validateCoupon('IC-0000-OPEN', { amount: 32000, orderId: 'F-3' });
    const [first] = await lookup.offlineJournal();
    expect(stored).toMatchObject({
      ok: false,
      reason: 'used_on_this_till',
      detail: { earlierUse: { orderId: 'F-1', journalId: first!.id } },
    });
  });

  it('reports a full disk also when each write is refused on its own request (WebKit), not the transaction', async () => {
    rename('WELCOME10', '요청마다 거절');
    faulty.failWrites('QuotaExceededError', ['coupons'], { perRequest: true });
    const report = await lookup.sync();
    expect(report.ok).toBe(false);
    expect(report.errors.at(-1)).toMatchObject({ code: 'quota_exceeded' });
    expect((await next(lookup.status())).lastError?.code).toBe('quota_exceeded');
    expect((await next(lookup.coupons())).data).toHaveLength(240);
  });

  it('shows a full disk on a lookup that could not store what it fetched', async () => {
    faulty.failWrites('QuotaExceededError', ['issuedCoupons']);
    const answer = await next(lookup.issuedCoupon('IC-0000-OPEN'), (r) => r.error !== null);
    expect(answer).toMatchObject({ data: null, error: { code: 'quota_exceeded' } });
  });

  it('says so when the browser closes the database connection, and goes on', async () => {
    // what Safari does to a background tab's connection: the browser closes it and says so
    // (fake-indexeddb cannot fire a close event itself, so the browser's call of the handler is made here)
    const backend = faulty.db.backendDB();
    backend.close();
    backend.onclose?.call(backend, new Event('close'));
    const status = await next(lookup.status(), (s) => s.lastError !== null);
    expect(status.lastError).toMatchObject({ code: 'storage_closed', message: expect.stringMatching(/reopened/) });
    expect((await next(lookup.coupon('WELCOME10'))).data?.coupon_code).toBe('WELCOME10');
    rename('FIXED3000', '다시 열린 뒤');
    expect((await lookup.sync()).ok).toBe(true);
    expect((await next(lookup.coupon('FIXED3000'))).data?.name).toBe('다시 열린 뒤');
  });

  it('reopens a connection the browser closed without telling, and answers a lookup not read before', async () => {
    // the close event has not come (yet): the first read finds the connection unusable and reopens it, as Dexie does
    faulty.db.backendDB().close();
    expect((await next(lookup.coupon('FIXED3000'))).data?.coupon_code).toBe('FIXED3000');
    expect(faulty.db.isOpen()).toBe(true);
  });

  it('says the database was deleted (not upgraded) when the browser evicts it, and the next sync builds it again', async () => {
    const db = faulty.db;
    await new Promise<void>((resolve, reject) => {
      const del = idb.deleteDatabase(db.name); // what eviction does, under the open connection
      del.onsuccess = () => resolve();
      del.onerror = () => reject(del.error);
    });
    const status = await next(lookup.status(), (s) => s.lastError !== null);
    expect(status.lastError).toMatchObject({
      code: 'storage_evicted',
      message: expect.stringMatching(/deleted this site's local database/),
    });
    expect((await lookup.sync()).ok).toBe(true);
    expect((await next(lookup.coupons())).data).toHaveLength(240);
    expect((await next(lookup.status())).lastError).toBeNull();
  });

  it('says so when another tab opens a newer schema, and writes nothing to it: every later write is refused, naming both versions', async () => {
    const db = faulty.db;
    const open = lookup.coupon('WELCOME10');
    expect((await next(open)).data?.coupon_code).toBe('WELCOME10');
    await new Promise<void>((resolve, reject) => {
      const req = idb.open(db.name, 80); // schema version 8, as a newer shop-lookup in another tab
      req.onsuccess = () => {
        req.result.close();
        resolve();
      };
      req.onerror = () => reject(req.error);
    });
    const status = await next(lookup.status(), (s) => s.lastError?.code === 'storage_upgraded');
    expect(status.lastError?.message).toMatch(/newer version of the local database.*Reload this tab/);
    const before = await dumpDatabase(idb, db.name);
    rename('WELCOME10', '새 버전이 연 뒤');
    const report = await lookup.sync();
    expect(report.ok).toBe(false);
    expect(report.errors.at(-1)).toMatchObject({
      code: 'storage_upgraded',
      message: expect.stringMatching(/newer shop-lookup \(schema version 8\).*older one \(schema version 7\)/),
    });
    await expect(lookup.validateCoupon('WELCOME10', { amount: 32000 })).rejects.toMatchObject({
      code: 'storage_upgraded',
    });
    expect(await dumpDatabase(idb, db.name)).toBe(before);
    expect(
      await new Promise<number>((resolve) => {
        const req = idb.open(db.name);
        req.onsuccess = () => {
          resolve(req.result.version);
          req.result.close();
        };
      }),
    ).toBe(80);
  });
});

describe('without a usable IndexedDB', () => {
  let mock: MockShopApi;
  beforeEach(async () => {
    mock = await startMock();
  });
  afterEach(async () => {
    await mock.close();
  });

  /** Old Firefox in a private window: IndexedDB is there, but opening a database fails with InvalidStateError. */
  const refusingFactory = (real: IDBFactory): IDBFactory => ({
    open() {
      const request = { error: null, result: undefined, readyState: 'pending' } as unknown as IDBOpenDBRequest;
      setTimeout(() => {
        Object.assign(request, {
          error: new DOMException(
            'A mutation operation was attempted on a database that did not allow mutations.',
            'InvalidStateError',
          ),
          readyState: 'done',
        });
        request.onerror?.call(request, {
          type: 'error',
          target: request,
          preventDefault() {},
          stopPropagation() {},
        } as unknown as Event);
      }, 0);
      return request;
    },
    deleteDatabase: (name) => real.deleteDatabase(name),
    cmp: (a, b) => real.cmp(a, b),
    databases: () => real.databases(),
  });

  it.each([
    ['there is none at all', undefined, /has no IndexedDB/],
    [
      'it refuses to open a database (old Firefox, private window)',
      refusingFactory(new IDBFactory()),
      /InvalidStateError/,
    ],
  ])(
    'answers online from memory when %s, validateCoupon too, and status() names the cause',
    async (_what, factory, cause) => {
      // no indexedDB option and none in this Node process: the platform has none
      const lookup = createShopLookup({
        baseUrl: mock.url,
        auth: { key: KEY, secret: SECRET },
        worker: false,
        rateLimits: false,
        ...(factory ? { indexedDB: factory, IDBKeyRange } : {}),
      });
      try {
        const status = await next(lookup.status(), (s) => s.storage !== undefined);
        expect(status.storage).toMatchObject({
          memoryOnly: true,
          unsavedJournal: 0,
          error: { code: 'storage_unavailable', message: expect.stringMatching(cause) },
        });
        expect(status.storage!.error.message).toMatch(/nothing is kept for offline use.*answer online, from memory/);
        expect((await lookup.sync()).ok).toBe(true);
        expect((await next(lookup.coupon('WELCOME10'), (r) => r.data !== null)).data?.coupon_code).toBe('WELCOME10');
        expect(await lookup.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({
          ok: true,
          discount: 3200,
          source: 'network',
        });
        mock.setDown(true);
        expect((await lookup.sync()).ok).toBe(false);
        // the entry is kept in memory, listed until the page goes, but not "journaled": a reload loses it
        const offline = await lookup.validateCoupon('WELCOME10', { amount: 32000 });
        expect(offline).toMatchObject({
          ok: true,
          source: 'local',
          journaled: false,
          journalError: { code: 'storage_unavailable', message: expect.stringMatching(cause) },
        });
        expect(await lookup.offlineJournal()).toMatchObject([{ code: 'WELCOME10' }]);
        expect((await next(lookup.status())).storage).toMatchObject({ memoryOnly: true, unsavedJournal: 0 });
      } finally {
        await lookup.close();
      }
    },
  );

  it('never opens a database a newer release wrote: its data and journal stay as they were, and this page answers from memory', async () => {
    const idb = new IDBFactory();
    // as a newer shop-lookup left it: schema version 8, a journal row among its tables
    const newer = new Dexie('till', { indexedDB: idb, IDBKeyRange });
    newer.version(8).stores({ coupons: 'coupon_code', meta: 'key', journal: '++id, at', journalV8: '++id' });
    await newer
      .table('journal')
      .add({ code: 'SOLD-BY-V7', amount: 1000, ok: true, reason: null, discount: 100, syncedAt: 1, at: 2 });
    newer.close();
    const before = await dumpDatabase(idb, 'till');

    const lookup = createShopLookup({
      baseUrl: mock.url,
      auth: { key: KEY, secret: SECRET },
      worker: false,
      rateLimits: false,
      indexedDB: idb,
      IDBKeyRange,
      dbName: 'till',
    });
    try {
      const status = await next(lookup.status(), (s) => s.storage !== undefined);
      expect(status.storage).toMatchObject({
        memoryOnly: true,
        error: {
          code: 'storage_upgraded',
          message: expect.stringMatching(
            /newer shop-lookup \(schema version 8\).*older one \(schema version 7\).*Reload the page/,
          ),
        },
      });
      expect((await lookup.sync()).ok).toBe(true);
      mock.setDown(true);
      expect((await lookup.sync()).ok).toBe(false);
      expect(await lookup.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({
        ok: true,
        source: 'local',
        journaled: false,
        journalError: { code: 'storage_upgraded' },
      });
      expect(await lookup.offlineJournal()).toMatchObject([{ code: 'WELCOME10' }]); // this page's, in memory
    } finally {
      await lookup.close();
    }
    expect(await dumpDatabase(idb, 'till')).toBe(before);
    expect((await idb.databases()).find((d) => d.name === 'till')?.version).toBe(80);
  });
});
