// The full coupon sync against the mock API: snapshots, deletions, resuming, read-throughs meanwhile, bad rows.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import type { IDBFactory } from 'fake-indexeddb';
import { RECORD_READERS_VERSION } from '@shop-lookup/shop-api';
import { confirmed, lookupFor, next, peek, startMock, waitFor } from './utils';

const LIST = '/v2/shop/coupons';
const codesOf = (rows: { coupon_code?: unknown }[]) => rows.map((c) => String(c.coupon_code)).sort();

describe('syncCoupons', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup & { idb: IDBFactory };
  let dbName: string;
  /** The codes a running re-sync has staged so far (read beside the engine, from the same database). */
  const stagedCodes = () =>
    peek(lookup.idb, dbName, async (db) => (await db.couponStage.toCollection().primaryKeys()) as string[]);

  beforeEach(async () => {
    mock = await startMock(); // 240 coupons: pages of 100, 100, 40
    dbName = `sync-${Math.random()}`;
    lookup = lookupFor(mock, { dbName });
    await lookup.sync();
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  it('deletes a coupon missing from a complete listing', async () => {
    expect(mock.removeCoupon('FIXED3000')).toBe(true);
    const report = await lookup.sync();
    expect(report).toMatchObject({ ok: true, deleted: 1 });
    const gone = await confirmed(lookup.coupon('FIXED3000'));
    expect(gone.data).toBeNull();
    expect(codesOf((await confirmed(lookup.coupons())).data)).toEqual(codesOf(mock.data.coupons));
  });

  it('keeps a coupon missing from a listing that failed halfway', async () => {
    mock.removeCoupon('FIXED3000');
    mock.inject('drop', { path: LIST, after: 1, times: Infinity }); // page 1 answers, then the connection drops
    const report = await lookup.sync();
    expect(report.ok).toBe(false);
    expect(report.deleted).toBe(0);
    expect(report.errors.map((e) => e.code)).toContain('network_error');
    const kept = await next(lookup.coupon('FIXED3000'));
    expect(kept.data?.coupon_code).toBe('FIXED3000');
    expect((await next(lookup.coupons())).data).toHaveLength(240);
  });

  it('shows the last complete snapshot until the new listing is complete', async () => {
    const firstPageCode = String(mock.data.coupons[0]!.coupon_code);
    mock.upsertCoupon({ ...mock.data.coupons[0]!, name: '새 이름' }); // changed on page 1
    mock.removeCoupon('FIXED3000');
    const lastPage = mock.hold({ path: LIST, after: 2 }); // page 3 waits until released
    const running = lookup.sync();
    await lastPage.arrived;
    // page 1's change is staged: the listing is really mid-way
    await waitFor(async () => expect((await stagedCodes()).includes(firstPageCode)).toBe(true));
    const mid = await next(lookup.coupon(firstPageCode));
    expect(mid.data?.name).not.toBe('새 이름');
    expect((await next(lookup.coupon('FIXED3000'))).data).not.toBeNull();
    expect((await next(lookup.coupons())).data).toHaveLength(240);
    lastPage.release();
    expect((await running).ok).toBe(true);
    expect((await next(lookup.coupon(firstPageCode))).data?.name).toBe('새 이름');
    expect((await next(lookup.coupon('FIXED3000'))).data).toBeNull();
  });

  it('keeps a coupon re-read from the API during a re-sync instead of the older copy the listing staged', async () => {
    const at = mock.data.coupons.findIndex((c) => c.coupon_code === 'WELCOME10');
    expect(at).toBeLessThan(100); // on page 1
    const welcome = mock.data.coupons[at]!;
    mock.upsertCoupon({ ...welcome, name: '목록의 사본' });
    const lastPage = mock.hold({ path: LIST, after: 2 });
    const running = lookup.sync();
    await lastPage.arrived; // page 1 (with the copy above) is in
    await waitFor(async () => expect(await stagedCodes()).toContain('WELCOME10'));
    // the shop stops the coupon; the checkout asks the API and gets the stopped copy
    mock.upsertCoupon({ ...welcome, name: '중지됨', status: 'stop' });
    const online = await lookup.validateCoupon('WELCOME10', { amount: 32000 });
    expect(online).toMatchObject({ ok: false, source: 'network' });
    lastPage.release();
    expect((await running).ok).toBe(true);
    const kept = await confirmed(lookup.coupon('WELCOME10'));
    expect(kept.data).toMatchObject({ name: '중지됨', status: 'stop' });
    mock.setDown(true); // the till goes offline: the local copy decides, and it is the stopped one
    expect(await lookup.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({
      ok: false,
      reason: 'inactive',
      source: 'local',
    });
    mock.setDown(false);
  });

  it('keeps a coupon re-read during a first sync over the older copy of a page requested before, stored after', async () => {
    const first = lookupFor(mock, { dbName: `first-${Math.random()}` });
    try {
      const onPage2 = mock.data.coupons[150]!;
      const code = String(onPage2.coupon_code);
      // page 2's answer is made now, with the coupon as it is; it reaches the till only when released
      const page2 = mock.hold({ path: LIST, after: 1, answered: true });
      const running = first.sync();
      await page2.arrived;
      mock.upsertCoupon({ ...onPage2, name: '중지됨', status: 'stop' });
      expect(await first.validateCoupon(code, { amount: 1_000_000 })).toMatchObject({
        ok: false,
        reason: 'inactive',
        source: 'network',
      });
      page2.release();
      expect((await running).ok).toBe(true);
      expect((await confirmed(first.coupon(code))).data).toMatchObject({ name: '중지됨', status: 'stop' });
    } finally {
      await first.close();
    }
  });

  it('neither brings back nor deletes a coupon the API answered for one by one during a re-sync', async () => {
    const gone = String(mock.data.coupons[10]!.coupon_code); // page 1, deleted after the listing read it
    mock.upsertCoupon({ ...mock.data.coupons[10]!, name: '목록의 사본' });
    const lastPage = mock.hold({ path: LIST, after: 2 });
    const running = lookup.sync();
    await lastPage.arrived;
    await waitFor(async () => expect(await stagedCodes()).toContain(gone));
    mock.removeCoupon(gone);
    mock.upsertCoupon({
      coupon_code: 'NEW-MID-SYNC',
      name: '새 쿠폰',
      status: 'progress',
      apply_sale_price: 1000,
      apply_sale_percent: 0,
    });
    // the checkout asks the API: one is confirmed gone, the other found
    expect(await lookup.validateCoupon(gone, { amount: 32000 })).toMatchObject({ ok: false, reason: 'not_found' });
    expect(await lookup.validateCoupon('NEW-MID-SYNC', { amount: 32000 })).toMatchObject({
      ok: true,
      source: 'network',
    });
    lastPage.release();
    expect((await running).ok).toBe(true);
    expect((await confirmed(lookup.coupon(gone))).data).toBeNull();
    expect((await confirmed(lookup.coupon('NEW-MID-SYNC'))).data?.name).toBe('새 쿠폰');
  });

  it('resumes an interrupted listing at the page where it stopped', async () => {
    mock.upsertCoupon({ ...mock.data.coupons[150]!, name: '두 번째 페이지' });
    mock.inject('drop', { path: LIST, after: 1, times: Infinity });
    expect((await lookup.sync()).ok).toBe(false);
    mock.clearFaults();
    mock.resetRequests();
    const report = await lookup.sync();
    expect(report.ok).toBe(true);
    const pages = mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset);
    expect(pages).toEqual(['2', '3']);
    expect((await next(lookup.coupon(String(mock.data.coupons[150]!.coupon_code)))).data?.name).toBe('두 번째 페이지');
  });

  it('starts over when the listing changed while it was interrupted', async () => {
    mock.inject('drop', { path: LIST, after: 1, times: Infinity });
    expect((await lookup.sync()).ok).toBe(false);
    mock.clearFaults();
    mock.upsertCoupon({ coupon_code: 'NEW-ONE', name: '새 쿠폰', status: 'progress', apply_sale_price: 1000 });
    mock.resetRequests();
    const report = await lookup.sync();
    expect(report.ok).toBe(true);
    const pages = mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset);
    expect(pages).toEqual(['2', '1', '2', '3']);
    expect((await next(lookup.coupon('NEW-ONE'))).data?.name).toBe('새 쿠폰');
  });

  it('rejects a malformed record, reports where and why, and stores its page-mates', async () => {
    mock.upsertCoupon({ coupon_code: 'BROKEN', name: '망가진 쿠폰', apply_sale_price: 'abc' });
    mock.upsertCoupon({ coupon_code: 'FINE', name: '멀쩡한 쿠폰', apply_sale_price: '15000' });
    const report = await lookup.sync();
    expect(report.ok).toBe(true);
    expect(report.rejected).toBe(1);
    const error = report.errors.find((e) => e.code === 'invalid_record')!;
    expect(error.message).toContain('"BROKEN"');
    expect(error.issues).toEqual([
      { path: 'data.list[40].apply_sale_price', message: 'expected an integer, got "abc"' },
    ]);
    expect((await next(lookup.coupon('BROKEN'))).data).toBeNull();
    expect((await next(lookup.coupon('FINE'))).data?.apply_sale_price).toBe(15000);
    const status = await next(lookup.status(), (s) => s.phase === 'idle');
    expect(status.lastError?.code).toBe('invalid_record');
  });

  it('keeps the good copy of a coupon whose update arrives malformed, confirmed by nothing until a readable record comes', async () => {
    const before = await confirmed(lookup.coupon('WELCOME10'));
    const record = mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!;
    // the shop stops WELCOME10, in a record with a field this till cannot read
    mock.upsertCoupon({ ...record, status: 'stop', apply_sale_percent: '열 퍼센트' });
    const report = await lookup.sync();
    expect(report).toMatchObject({ ok: true, rejected: 1, deleted: 0 });
    // the copy stays, with its own age (not the listing's), and says why
    const kept = await next(lookup.coupon('WELCOME10'), (r) => r.error !== null);
    expect(kept).toMatchObject({
      data: before.data,
      syncedAt: before.syncedAt,
      error: { code: 'invalid_record', message: expect.stringContaining('"WELCOME10"') },
    });
    expect((await next(lookup.status())).lastSyncedAt.coupons).toBeGreaterThan(before.syncedAt!);
    // online (the API's single record is unreadable too) and offline, it is never ok
    expect(await lookup.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({
      ok: false,
      reason: 'unreadable',
      source: 'local',
      detail: { rule: 'record' },
    });
    expect(await lookup.sync()).toMatchObject({ rejected: 1 });
    expect((await next(lookup.coupon('WELCOME10'))).syncedAt).toBe(before.syncedAt);
    mock.setDown(true);
    expect((await lookup.sync()).ok).toBe(false);
    expect(await lookup.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({
      ok: false,
      reason: 'unreadable',
      source: 'local',
      coupon: { coupon_code: 'WELCOME10' },
    });
    mock.setDown(false);

    // readable again: the listing's word counts again (and it says stopped)
    mock.upsertCoupon({ ...record, status: 'stop' });
    expect(await lookup.sync()).toMatchObject({ ok: true, rejected: 0 });
    const fixed = await next(lookup.coupon('WELCOME10'), (r) => r.data?.status === 'stop' && r.error === null);
    expect(fixed.syncedAt).toBeGreaterThan(before.syncedAt!);
    expect(await lookup.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({
      ok: false,
      reason: 'inactive',
    });
  });

  it('ends the mark of an unreadable coupon the next complete listing no longer names', async () => {
    mock.upsertCoupon({
      ...mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!,
      apply_sale_percent: '열 퍼센트',
    });
    expect(await lookup.sync()).toMatchObject({ rejected: 1 });
    mock.removeCoupon('WELCOME10');
    expect(await lookup.sync()).toMatchObject({ ok: true, deleted: 1 });
    expect(await confirmed(lookup.coupon('WELCOME10'))).toMatchObject({ data: null, error: null });
    expect(await lookup.validateCoupon('WELCOME10', { amount: 32000 })).toMatchObject({
      ok: false,
      reason: 'not_found',
    });
  });

  it('deletes nothing when a rejected record has no readable code', async () => {
    mock.removeCoupon('FIXED3000');
    mock.data.coupons.push({ name: '코드 없는 쿠폰' });
    const report = await lookup.sync();
    expect(report.deleted).toBe(0);
    expect(report.errors.map((e) => e.code)).toEqual(['invalid_record', 'deletions_skipped']);
    expect((await next(lookup.coupon('FIXED3000'))).data).not.toBeNull();
  });

  it.each([
    ['repeat rows of an earlier page', 'repeat-page'],
    ['skipped rows', 'skip-rows'],
  ] as const)(
    'lists again, from page 1, a listing whose pages %s, and applies the one that adds up',
    async (_, fault) => {
      mock.removeCoupon('FIXED3000');
      mock.inject(fault, { path: LIST, after: 1 });
      mock.resetRequests();
      const report = await lookup.sync();
      expect(report).toMatchObject({ ok: true, deleted: 1, errors: [] });
      // (page 3 of the first listing may have been asked for ahead before page 2 was found wanting)
      const pages = mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset);
      expect(pages.slice(0, 2)).toEqual(['1', '2']);
      expect(pages.slice(-3)).toEqual(['1', '2', '3']);
      expect((await confirmed(lookup.coupon('FIXED3000'))).data).toBeNull();
    },
  );

  it.each([
    ['repeat rows of an earlier page', 'repeat-page', /repeats/],
    ['skip rows', 'skip-rows', /were listed but the API counted/],
  ] as const)('refuses a listing whose pages %s every time, keeping the last snapshot', async (_, fault, why) => {
    mock.removeCoupon('FIXED3000');
    mock.inject(fault, { path: LIST, times: Infinity });
    const report = await lookup.sync();
    expect(report).toMatchObject({ ok: false, deleted: 0 });
    expect(report.errors).toEqual([{ code: 'inconsistent_listing', message: expect.stringMatching(why) }]);
    expect((await next(lookup.coupon('FIXED3000'))).data).not.toBeNull();
  });
  it('reads every page again once after the record readers changed, then trusts the page hashes again', async () => {
    const code = String(mock.data.coupons[150]!.coupon_code); // page 2
    const localName = () => peek(lookup.idb, dbName, async (db) => (await db.coupons.get(code))?.name);
    const listedName = String(mock.data.coupons[150]!.name);
    // what an older reader made of the row (the API's row itself did not change)
    const readOtherwise = () =>
      peek(lookup.idb, dbName, (db) => db.coupons.update(code, { name: '예전 판독기가 읽은 이름' }));
    await readOtherwise();
    // the page hashes were stored by today's readers: page 2 is skipped whole, the local row stays as it is
    expect(await lookup.sync()).toMatchObject({ ok: true, written: 0 });
    expect(await localName()).toBe('예전 판독기가 읽은 이름');
    // hashes stored by an older version of the readers: every page is read, and the row becomes what today's make of it
    await peek(lookup.idb, dbName, (db) =>
      db.couponHashes.toCollection().modify({ readers: RECORD_READERS_VERSION - 1 }),
    );
    expect(await lookup.sync()).toMatchObject({ ok: true, written: 1, deleted: 0, fetched: 240 });
    expect(await localName()).toBe(listedName);
    // that listing stored its hashes under today's readers: trusted again
    await readOtherwise();
    expect(await lookup.sync()).toMatchObject({ ok: true, written: 0 });
    expect(await localName()).toBe('예전 판독기가 읽은 이름');
  });

  it('starts a re-sync over, from page 1, when the stored checkpoint is of an earlier build', async () => {
    mock.removeCoupon('FIXED3000');
    const lastCode = String(mock.data.coupons.at(-1)!.coupon_code); // page 3
    mock.upsertCoupon({ ...mock.data.coupons.at(-1)!, name: '세 번째 페이지' });
    // an interrupted listing of the previous build, past page 2 of today's listing (whose codes it kept elsewhere):
    // resumed as it says, the codes of pages 1 and 2 would count as unlisted
    await peek(lookup.idb, dbName, (db) =>
      db.meta.put({
        key: '@couponSync',
        startedAt: Date.now(),
        mode: 'staged',
        page: 2,
        totalPages: 3,
        dataCount: 239,
        unkeyed: 0,
        listed: 200,
        unmatched: 0,
        listing: 'earlier-build',
      } as never),
    );
    mock.resetRequests();
    expect(await lookup.sync()).toMatchObject({ ok: true, written: 1, deleted: 1 });
    expect(mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset)).toEqual(['1', '2', '3']);
    expect((await confirmed(lookup.coupon('FIXED3000'))).data).toBeNull();
    expect((await confirmed(lookup.coupon(lastCode))).data?.name).toBe('세 번째 페이지');
  });

  it('starts a first sync over when an earlier build left a lean listing, and deletes what no page lists', async () => {
    const name = `first-${Math.random()}`;
    const first = lookupFor(mock, { dbName: name });
    try {
      mock.inject('drop', { path: LIST, after: 1, times: Infinity }); // page 1 is stored, then the connection drops
      expect((await first.sync()).ok).toBe(false);
      mock.clearFaults();
      // as the previous build left it: a lean listing past page 1 (its codes are the rows of coupons), and a row
      // no page lists, written since (resumed as lean, nothing would ever delete it)
      await peek(first.idb, name, async (db) => {
        await db.meta.put({
          key: '@couponSync',
          startedAt: Date.now(),
          mode: 'direct',
          page: 1,
          totalPages: 3,
          dataCount: 240,
          unkeyed: 0,
          listed: 100,
          unmatched: 1,
          listing: 'earlier-build',
          pristine: true,
          lean: true,
        } as never);
        await db.coupons.put({ coupon_code: 'STRAY', name: '어디에도 없는 쿠폰' });
      });
      mock.resetRequests();
      expect(await first.sync()).toMatchObject({ ok: true, deleted: 1 });
      expect(mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset)).toEqual(['1', '2', '3']);
      expect(codesOf((await confirmed(first.coupons())).data)).toEqual(codesOf(mock.data.coupons));
    } finally {
      await first.close();
    }
  });
  describe('a listing whose pages shift under it', () => {
    /** The coupons asked for one by one, in order. */
    const itemRequests = () =>
      mock.requests
        .filter((r) => r.path.startsWith(`${LIST}/`))
        .map((r) => decodeURIComponent(r.path.slice(LIST.length + 1)));
    const listRequests = () => mock.requests.filter((r) => r.path === LIST).map((r) => r.query.offset);

    it('deletes a coupon the listing did not name once its own GET answers not found', async () => {
      mock.removeCoupon('FIXED3000');
      mock.resetRequests();
      expect(await lookup.sync()).toMatchObject({ ok: true, deleted: 1, errors: [] });
      expect(itemRequests()).toEqual(['FIXED3000']);
      expect(listRequests()).toEqual(['1', '2', '3']);
    });

    it('confirms many missing coupons by a second listing instead of a GET each', async () => {
      const removed = mock.data.coupons.slice(0, 20).map((c) => String(c.coupon_code)); // 3 pages: 15 GETs at most
      for (const code of removed) mock.removeCoupon(code);
      mock.resetRequests();
      expect(await lookup.sync()).toMatchObject({ ok: true, deleted: 20, errors: [] });
      expect(itemRequests()).toEqual([]);
      expect(listRequests()).toEqual(['1', '2', '3', '1', '2', '3']);
      expect(codesOf((await confirmed(lookup.coupons())).data)).toEqual(codesOf(mock.data.coupons));
    });

    it('confirms by a second listing when the server refuses the single GETs', async () => {
      mock.removeCoupon('FIXED3000');
      mock.inject('permission', { path: new RegExp(`^${LIST}/.+`), times: Infinity });
      mock.resetRequests();
      expect(await lookup.sync()).toMatchObject({ ok: true, deleted: 1, errors: [] });
      expect(listRequests()).toEqual(['1', '2', '3', '1', '2', '3']);
    });

    it('deletes nothing while the GETs fail, and asks again at the next sync without listing again', async () => {
      mock.removeCoupon('FIXED3000');
      mock.inject('http500', { path: new RegExp(`^${LIST}/.+`), times: Infinity });
      const failed = await lookup.sync();
      expect(failed).toMatchObject({ ok: false, deleted: 0, errors: [{ code: 'server_error' }] });
      expect((await next(lookup.coupon('FIXED3000'))).data).not.toBeNull();
      mock.clearFaults();
      mock.resetRequests();
      expect(await lookup.sync()).toMatchObject({ ok: true, deleted: 1, errors: [] });
      // (the page after the last tells the listing has not changed since)
      expect(listRequests()).toEqual(['4']);
      expect(itemRequests()).toEqual(['FIXED3000']);
    });

    it('keeps, as its GET answers, a coupon the listing never names', async () => {
      const hidden = mock.data.coupons[150]!;
      const code = String(hidden.coupon_code);
      mock.upsertCoupon({ ...hidden, name: '목록에 없는 쿠폰' });
      // a gateway whose listing leaves one coupon out (and counts one fewer), every time
      const hiding: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        if (new URL(String(input)).pathname !== LIST) return res;
        const body = (await res.json()) as {
          data: { list: { coupon_code: string }[]; pagenation: { data_count: number } };
        };
        body.data.list = body.data.list.filter((c) => c.coupon_code !== code);
        body.data.pagenation.data_count -= 1;
        return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
      };
      const till = lookupFor(mock, { indexedDB: lookup.idb, dbName, fetch: hiding });
      try {
        mock.resetRequests();
        expect(await till.sync()).toMatchObject({ ok: true, deleted: 0, errors: [] });
        expect(itemRequests()).toEqual([code, code, code]); // three listings, the last applied
        expect((await confirmed(till.coupon(code))).data?.name).toBe('목록에 없는 쿠폰');
      } finally {
        await till.close();
      }
    });

    it('keeps a coupon the shifted pages skipped and drops the one deleted after its page was read', async () => {
      const deleted = String(mock.data.coupons[5]!.coupon_code); // A: page 1
      const skipped = String(mock.data.coupons[100]!.coupon_code); // C: first of page 2, moves onto page 1
      const page2 = mock.hold({ path: LIST, after: 1 });
      const running = lookup.sync();
      await page2.arrived; // page 1 was read with A on it
      mock.removeCoupon(deleted);
      mock.upsertCoupon({
        coupon_code: 'NEW-G',
        name: '새 쿠폰',
        status: 'progress',
        apply_sale_price: 1000,
        apply_sale_percent: 0,
      });
      expect(mock.data.coupons).toHaveLength(240); // the count did not move
      mock.resetRequests();
      page2.release();
      const report = await running;
      expect(report).toMatchObject({ ok: true, deleted: 1, errors: [] });
      // the one unlisted coupon was asked for, found: the listing was not applied but listed again
      expect(itemRequests()).toEqual([skipped, deleted]);
      expect(
        mock.requests
          .filter((r) => r.path === LIST)
          .map((r) => r.query.offset)
          .slice(-3),
      ).toEqual(['1', '2', '3']);
      mock.setDown(true);
      expect(await lookup.validateCoupon(skipped, { amount: 1_000_000 })).toMatchObject({ ok: true, source: 'local' });
      expect(await lookup.validateCoupon(deleted, { amount: 1_000_000 })).toMatchObject({ ok: false });
      expect(await lookup.validateCoupon('NEW-G', { amount: 32000 })).toMatchObject({ ok: true, source: 'local' });
      mock.setDown(false);
      expect(codesOf((await confirmed(lookup.coupons())).data)).toEqual(codesOf(mock.data.coupons));
    });
  });

  describe('an empty listing', () => {
    /** A gateway that answers the coupon listing with `data` as given, everything else as the API does. */
    const answering =
      (data: unknown): typeof fetch =>
      async (input, init) => {
        if (new URL(String(input)).pathname !== LIST) return fetch(input, init);
        return new Response(JSON.stringify({ msg: 'SUCCESS', code: 200, data }), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      };

    it.each([
      ['`list: []` without its paging', { list: [] }],
      ['`data: []`', []],
      ['`list: []` with a paging object that has no count', { list: [], pagenation: { current_page: 1 } }],
    ])('refuses %s as a protocol error and deletes nothing', async (_what, data) => {
      const till = lookupFor(mock, { indexedDB: lookup.idb, dbName, fetch: answering(data) });
      try {
        const report = await till.sync();
        expect(report).toMatchObject({ ok: false, deleted: 0 });
        expect(report.errors[0]).toMatchObject({
          code: 'bad_response',
          message: expect.stringMatching(/does not say how long the list is/),
        });
        expect((await next(till.coupons())).data).toHaveLength(240);
      } finally {
        await till.close();
      }
    });

    it('deletes every coupon only once a second complete listing is empty too', async () => {
      const removed = mock.data.coupons.map((c) => String(c.coupon_code));
      for (const code of removed) mock.removeCoupon(code);
      const first = await lookup.sync();
      expect(first).toMatchObject({ ok: false, deleted: 0 });
      expect(first.errors.map((e) => e.code)).toEqual(['empty_listing_unconfirmed']);
      expect(first.errors[0]!.message).toMatch(
        /listed no coupons at all, while 240 are stored here: nothing was deleted/,
      );
      expect((await next(lookup.coupons())).data).toHaveLength(240);

      const second = await lookup.sync();
      expect(second).toMatchObject({ ok: true, deleted: 240 });
      expect(await confirmed(lookup.coupons())).toMatchObject({ data: [] });
    });

    it('asks again after a listing with coupons came between two empty ones', async () => {
      const all = mock.data.coupons.slice();
      for (const c of all) mock.removeCoupon(String(c.coupon_code));
      expect((await lookup.sync()).errors.map((e) => e.code)).toEqual(['empty_listing_unconfirmed']);
      for (const c of all) mock.upsertCoupon(c);
      expect(await lookup.sync()).toMatchObject({ ok: true, deleted: 0 });
      for (const c of all) mock.removeCoupon(String(c.coupon_code));
      expect(await lookup.sync()).toMatchObject({ ok: false, deleted: 0 });
      expect((await next(lookup.coupons())).data).toHaveLength(240);
    });
  });
});
