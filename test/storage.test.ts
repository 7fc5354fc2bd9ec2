// IndexedDB failing under the engine: a full disk, a connection the browser closed, another tab's newer schema.
// The lookups keep answering from what is stored; status() says what happened in words.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '../mock-server';
import { faultyStore, lookupWithEngine, next, startMock } from './utils';

describe('storage failures', () => {
  let mock: MockShopApi;
  let faulty: ReturnType<typeof faultyStore>;
  let lookup: ReturnType<typeof lookupWithEngine>;

  beforeEach(async () => {
    mock = await startMock();
    faulty = faultyStore();
    lookup = lookupWithEngine(mock, { openStore: faulty.openStore });
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
    expect(report.errors.at(-1)).toMatchObject({ code: 'quota_exceeded', message: expect.stringMatching(/storage for the site is full/) });
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
    expect(status.storage).toMatchObject({ memoryOnly: false, error: { code: 'quota_exceeded', message: expect.stringMatching(/storage for the site is full/) } });

    faulty.heal();
    const third = await lookup.validateCoupon('WELCOME10', { amount: 50000 });
    expect(third).toMatchObject({ journaled: true });
    // in the order they were given, the two kept in memory first
    expect((await lookup.offlineJournal()).map((e) => [e.code, e.amount])).toEqual([['WELCOME10', 32000], ['FIXED3000', 10000], ['WELCOME10', 50000]]);
    expect((await next(lookup.status(), (s) => s.storage === undefined)).storage).toBeUndefined();
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

  it("says so when another tab opens a newer schema, and keeps answering from the reopened database", async () => {
    const db = faulty.db;
    const idb = (db as unknown as { _options: { indexedDB: IDBFactory } })._options.indexedDB;
    await new Promise<void>((resolve, reject) => {
      const open = idb.open(db.name, db.verno * 10 + 10); // a newer version, as a newer shop-lookup in another tab
      open.onsuccess = () => {
        open.result.close();
        resolve();
      };
      open.onerror = () => reject(open.error);
    });
    const status = await next(lookup.status(), (s) => s.lastError?.code === 'storage_upgraded');
    expect(status.lastError?.message).toMatch(/newer version of the local database.*Reload this tab/);
    expect((await next(lookup.coupon('WELCOME10'))).data?.coupon_code).toBe('WELCOME10');
    expect((await lookup.sync()).ok).toBe(true);
  });
});
