import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '../packages/mock-server/src';
import type { ShopLookup } from '../src';
import { lookupFor, lookupWithEngine, next, startMock } from './utils';

/** An instant given as Seoul wall-clock time (UTC+9), inside FIXED3000's period (2026-01-01 .. 2027-12-31). */
const kst = (y: number, mo: number, d: number, h = 0) => Date.UTC(y, mo - 1, d, h - 9);
const AT = kst(2026, 6, 1, 12);

type Lookup = ShopLookup & { idb: IDBFactory };

/** Takes the API down and lets the engine find out (a failed sync marks it unreachable). */
async function goOffline(mock: MockShopApi, lookup: ShopLookup) {
  mock.setDown(true);
  const report = await lookup.sync();
  expect(report.ok).toBe(false);
}

/** Requests the mock received for `code` (either code space). */
const requestsFor = (mock: MockShopApi, code: string) => mock.requests.filter((r) => r.path.endsWith(`/${code}`));

describe('validateCoupon', () => {
  let mock: MockShopApi;
  let lookup: Lookup;

  beforeEach(async () => {
    mock = await startMock();
    lookup = lookupFor(mock);
    expect((await lookup.sync()).ok).toBe(true);
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  describe('online', () => {
    it('gives the discount of a valid coupon, decided by a fresh API answer', async () => {
      const v = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
      expect(v).toMatchObject({ ok: true, discount: 3200, kind: 'coupon', source: 'network', coupon: { coupon_code: 'WELCOME10' } });
      expect(v.syncedAt).toBeGreaterThan(Date.now() - 5000);
      const capped = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 100000 });
      expect(capped).toMatchObject({ ok: true, discount: 5000 });
    });

    it('accepts an unused issued coupon and refuses a used one', async () => {
      const open = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 });
      expect(open).toMatchObject({ ok: true, discount: 3200, kind: 'issued', source: 'network' });
      const used = await lookup.validateCoupon(MOCK_CODES.issuedUsed, { amount: 32000, at: AT });
      expect(used).toMatchObject({ ok: false, reason: 'inactive', kind: 'issued', source: 'network', detail: { rule: 'status' } });
      expect(used.ok ? '' : used.detail.message).toContain('already used');
    });

    it('says expired for a coupon whose period is over', async () => {
      const v = await lookup.validateCoupon(MOCK_CODES.expiredCoupon, { amount: 60000 });
      expect(v).toMatchObject({ ok: false, reason: 'expired', source: 'network', detail: { rule: 'period', field: 'use_period' } });
    });

    it('says below_minimum with both numbers in words', async () => {
      const v = await lookup.validateCoupon(MOCK_CODES.fixedCoupon, { amount: 19999, at: AT });
      expect(v).toMatchObject({ ok: false, reason: 'below_minimum', detail: { message: 'Order 19,999 is below the minimum of 20,000 for this coupon.' } });
    });

    it('says not_found for a code the API confirms in neither code space', async () => {
      const v = await lookup.validateCoupon('NO-SUCH-CODE', { amount: 32000 });
      expect(v).toMatchObject({ ok: false, reason: 'not_found', source: 'network', detail: { rule: 'lookup' } });
      expect(requestsFor(mock, 'NO-SUCH-CODE').map((r) => r.path).sort()).toEqual([
        '/v2/shop/coupons/NO-SUCH-CODE',
        '/v2/shop/issue-coupons/NO-SUCH-CODE',
      ]);
    });

    it('asks the API even with a local copy: an issued coupon used at another till a moment ago is refused', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      const record = mock.data.issuedCoupons.find((c) => c.coupon_issue_code === MOCK_CODES.issuedUnused)!;
      mock.upsertIssuedCoupon({ ...record, status: 'complete', use_date: '2026-06-01 11:59:00', shop_order_code: '202606010000001' });
      const v = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, at: AT });
      expect(v).toMatchObject({ ok: false, reason: 'inactive', source: 'network' });
      expect(requestsFor(mock, MOCK_CODES.issuedUnused).map((r) => r.path)).toContain(`/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`);
    });

    it('decides from local data (source local) when the API answers with an error, without journaling it', async () => {
      mock.inject('http500', { path: `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`, times: Infinity });
      const v = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
      expect(v).toMatchObject({ ok: true, discount: 3200, source: 'local' });
      expect(await lookup.offlineJournal()).toEqual([]);
    });

    it('says unreadable, never ok, when the API now sends a record of the coupon this till cannot read', async () => {
      const record = mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!;
      mock.upsertCoupon({ ...record, status: 'stop', apply_sale_percent: { value: 10 } });
      const v = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
      expect(v).toMatchObject({ ok: false, reason: 'unreadable', source: 'local', coupon: { coupon_code: 'WELCOME10' }, detail: { rule: 'record' } });
      expect(v.ok ? '' : v.detail.message).toMatch(/cannot read.*may be out of date.*apply_sale_percent/);
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({ ok: false, reason: 'unreadable' });
    });

    it('does not keep the cashier waiting on a slow API: local data decides while the API still has not answered', async () => {
      const slow = mock.hold({ path: `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}` });
      try {
        const v = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
        expect(slow.held).toBe(1); // the verdict came, the API's answer did not
        expect(v).toMatchObject({ ok: true, discount: 3200, source: 'local' });
        expect(await lookup.offlineJournal()).toMatchObject([{ code: 'WELCOME10', ok: true, discount: 3200 }]);
      } finally {
        slow.release();
      }
    });

    it('refuses a malformed order with bad_request instead of a verdict', async () => {
      await expect(lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: Number.NaN })).rejects.toMatchObject({ code: 'bad_request' });
      await expect(lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: -1 })).rejects.toMatchObject({ code: 'bad_request' });
    });
  });

  describe('offline', () => {
    it('decides a synced coupon from local data, says so, and asks no network', async () => {
      await goOffline(mock, lookup);
      mock.resetRequests();
      const v = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
      expect(v).toMatchObject({ ok: true, discount: 3200, source: 'local', kind: 'coupon' });
      expect(v.syncedAt).not.toBeNull();
      expect(requestsFor(mock, MOCK_CODES.welcomeCoupon)).toEqual([]);
    });

    it('says unknown_offline, never not_found, for a code it has never seen', async () => {
      await goOffline(mock, lookup);
      const v = await lookup.validateCoupon('NEVER-SEEN', { amount: 32000 });
      expect(v).toMatchObject({ ok: false, reason: 'unknown_offline', source: 'local', syncedAt: null, detail: { rule: 'lookup' } });
    });

    it('says not_found offline for a code the API confirmed absent in both code spaces before', async () => {
      expect(await lookup.validateCoupon('GONE-1', { amount: 1 })).toMatchObject({ reason: 'not_found', source: 'network' });
      await goOffline(mock, lookup);
      const v = await lookup.validateCoupon('GONE-1', { amount: 1 });
      expect(v).toMatchObject({ ok: false, reason: 'not_found', source: 'local' });
      expect(v.syncedAt).not.toBeNull();
    });

    it('decides prefetched issued coupons: the unused one passes, the used one is refused', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused, MOCK_CODES.issuedUsed])).ok).toBe(true);
      await goOffline(mock, lookup);
      const open = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 });
      expect(open).toMatchObject({ ok: true, discount: 3200, kind: 'issued', source: 'local' });
      const used = await lookup.validateCoupon(MOCK_CODES.issuedUsed, { amount: 32000, at: AT });
      expect(used).toMatchObject({ ok: false, reason: 'inactive', kind: 'issued', source: 'local' });
    });

    it('says expired from local data too', async () => {
      await goOffline(mock, lookup);
      const v = await lookup.validateCoupon(MOCK_CODES.expiredCoupon, { amount: 60000 });
      expect(v).toMatchObject({ ok: false, reason: 'expired', source: 'local' });
    });
  });

  describe('a coupon the API answers under another code', () => {
    it('finds it under the code asked, online and then offline, and the lookup shows it too', async () => {
      // an API that matches codes without regard to case: asked for welcome10, it answers with WELCOME10
      const caseless: typeof fetch = (input, init) => fetch(String(input).replace('/v2/shop/coupons/welcome10', '/v2/shop/coupons/WELCOME10'), init);
      const till = lookupFor(mock, { fetch: caseless });
      try {
        expect((await till.sync()).ok).toBe(true);
        const online = await till.validateCoupon('welcome10', { amount: 32000 });
        expect(online).toMatchObject({ ok: true, discount: 3200, source: 'network', coupon: { coupon_code: 'WELCOME10' } });
        expect((await next(till.coupon('welcome10'), (r) => r.data !== null)).data?.coupon_code).toBe('WELCOME10');
        await goOffline(mock, till);
        const offline = await till.validateCoupon('welcome10', { amount: 32000 });
        expect(offline).toMatchObject({ ok: true, discount: 3200, source: 'local', coupon: { coupon_code: 'WELCOME10' } });
      } finally {
        await till.close();
      }
    });
  });

  describe('stale local data', () => {
    it('says stale offline when the data is older than maxDataAgeMs, and accepts it with acceptStale', async () => {
      // the engine's clock, moved by the test: the data ages without waiting for it
      let clock = Date.now();
      const hour = 60 * 60 * 1000;
      const strict = lookupWithEngine(mock, { now: () => clock }, { maxDataAgeMs: hour });
      try {
        expect((await strict.sync()).ok).toBe(true);
        const syncedAt = clock;
        await goOffline(mock, strict);
        clock += hour; // exactly as old as allowed: still fresh
        expect(await strict.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({ ok: true, source: 'local' });
        clock += 1;
        const v = await strict.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
        expect(v).toMatchObject({ ok: false, reason: 'stale', source: 'local', coupon: { coupon_code: 'WELCOME10' }, detail: { rule: 'freshness', discount: 3200 } });
        expect(v.ok ? 0 : v.detail.dataAgeMs).toBe(clock - syncedAt);
        const accepted = await strict.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000, acceptStale: true });
        expect(accepted).toMatchObject({ ok: true, discount: 3200, source: 'local' });
      } finally {
        await strict.close();
        strict.dispose();
      }
    });

    it('is not stale with the default 24 h window', async () => {
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({ ok: true, source: 'local' });
    });
  });

  describe("the till's clock", () => {
    const HOUR = 3_600_000;
    const DAY = 24 * HOUR;
    /** The API's answers without their Date header (a cross-origin API that does not expose it). */
    const noDate: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const headers = new Headers(res.headers);
      headers.delete('date');
      return new Response(await res.text(), { status: res.status, headers });
    };

    it('judges a coupon period by the API\'s time when the till\'s clock is two days behind, and shows the offset in status()', async () => {
      const seconds = (ms: number) => Math.floor(ms / 1000);
      mock.upsertCoupon({ coupon_code: 'ENDED-YESTERDAY', status: 'progress', apply_sale_percent: 10, use_period: `${seconds(Date.now() - 30 * DAY)} ~ ${seconds(Date.now() - DAY)}` });
      const behind = lookupWithEngine(mock, { now: () => Date.now() - 2 * DAY });
      try {
        mock.resetRequests();
        expect((await behind.sync()).ok).toBe(true);
        // the listing had begun by the till's clock; the first answers told the API's: it started over, once
        expect(mock.requests.filter((r) => r.path === '/v2/shop/coupons' && r.query.offset === '1')).toHaveLength(2);
        const v = await behind.validateCoupon('ENDED-YESTERDAY', { amount: 32000 });
        expect(v).toMatchObject({ ok: false, reason: 'expired', source: 'network' });
        const status = await next(behind.status(), (s) => s.clockOffsetMs !== undefined);
        expect(status.clockOffsetMs! / DAY).toBeCloseTo(-2, 3);
        // the data's age is the API's time too: just synced is fresh, also offline
        await goOffline(mock, behind as unknown as Lookup);
        expect(await behind.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({ ok: true, source: 'local' });
      } finally {
        await behind.close();
        behind.dispose();
      }
    });

    it('takes data stamped by a clock that was ahead as old, not fresh: a 47-hour-old copy fails a 24-hour rule', async () => {
      const idb = new IDBFactory();
      const dbName = 'clock-ahead';
      // a till 47 hours ahead whose API answers carry no Date: its sync is stamped 47 hours in the future
      const ahead = lookupWithEngine(mock, { now: () => Date.now() + 47 * HOUR, fetch: noDate, indexedDB: idb, IDBKeyRange }, { dbName });
      expect((await ahead.sync()).ok).toBe(true);
      await ahead.close();
      ahead.dispose();
      // the clock was put right; the API is out of reach, so the stamps cannot be checked
      mock.setDown(true);
      const till = lookupFor(mock, { indexedDB: idb, dbName });
      try {
        expect((await till.sync()).ok).toBe(false);
        const v = await till.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
        expect(v).toMatchObject({ ok: false, reason: 'stale', source: 'local', detail: { rule: 'freshness', discount: 3200 } });
        expect(v.ok ? '' : v.detail.message).toMatch(/stamped in the future/);
        expect(await till.validateCoupon('NEVER-SEEN', { amount: 1 })).toMatchObject({ reason: 'unknown_offline' });
      } finally {
        await till.close();
      }
    });
  });

  describe('offline journal', () => {
    it('lists exactly the offline verdicts, oldest first, and keeps them across a restart', async () => {
      const dbName = 'journal-restart';
      const first = lookupFor(mock, { dbName });
      let second: Lookup | null = null;
      try {
        expect((await first.sync()).ok).toBe(true);
        await first.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 }); // online: not journaled
        await first.validateCoupon('NOPE-ONLINE', { amount: 5000 }); // online: not journaled
        await goOffline(mock, first);
        await first.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
        await first.validateCoupon(MOCK_CODES.fixedCoupon, { amount: 10000, at: AT });
        await first.validateCoupon('NOPE-OFFLINE', { amount: 7000 });

        const expected = [
          { code: 'WELCOME10', amount: 32000, ok: true, reason: null, discount: 3200, kind: 'coupon' },
          { code: 'FIXED3000', amount: 10000, ok: false, reason: 'below_minimum', discount: null, kind: 'coupon' },
          { code: 'NOPE-OFFLINE', amount: 7000, ok: false, reason: 'unknown_offline', discount: null, kind: null, syncedAt: null },
        ];
        const journal = await first.offlineJournal();
        expect(journal).toMatchObject(expected);
        expect(journal).toHaveLength(3);
        expect(journal.map((e) => e.id)).toEqual([...journal.map((e) => e.id)].sort((a, b) => a - b));
        expect(journal[0]!.syncedAt).not.toBeNull();
        expect(journal.every((e) => e.at > 0)).toBe(true);

        await first.close();
        second = lookupFor(mock, { indexedDB: first.idb, dbName });
        expect(await second.offlineJournal()).toEqual(journal);
      } finally {
        await first.close();
        await second?.close();
      }
    });

    it('clears entries through an id and says how many; without an id it refuses and deletes nothing', async () => {
      await goOffline(mock, lookup);
      for (const amount of [1000, 2000, 3000]) await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount });
      const [a, b, c] = await lookup.offlineJournal();
      expect(await lookup.clearOfflineJournal(a!.id)).toBe(1);
      expect((await lookup.offlineJournal()).map((e) => e.id)).toEqual([b!.id, c!.id]);
      // what `clearOfflineJournal(entries.at(-1)?.id)` passes for an empty page: never "everything"
      const none = (await lookup.offlineJournal({ after: c!.id })).at(-1)?.id;
      await expect(lookup.clearOfflineJournal(none as unknown as number)).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/nothing was deleted/) });
      await expect(lookup.clearOfflineJournal(null as unknown as number)).rejects.toMatchObject({ code: 'bad_request' });
      expect((await lookup.offlineJournal()).map((e) => e.id)).toEqual([b!.id, c!.id]);
      expect(await lookup.clearOfflineJournal(c!.id)).toBe(2);
      expect(await lookup.offlineJournal()).toEqual([]);
      expect(await lookup.clearOfflineJournal(c!.id)).toBe(0);
    });

    it('keeps the journal through clear(), and drops it only with clear({ discardJournal: true })', async () => {
      await goOffline(mock, lookup);
      await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
      await lookup.clear();
      expect((await next(lookup.coupons())).data).toEqual([]);
      expect(await lookup.offlineJournal()).toMatchObject([{ code: 'WELCOME10', amount: 32000 }]);
      await lookup.clear({ discardJournal: true });
      expect(await lookup.offlineJournal()).toEqual([]);
    });

    it('exports the journal page by page, oldest first, each page after the last id of the one before', async () => {
      await goOffline(mock, lookup);
      for (let amount = 1000; amount <= 5000; amount += 1000) await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount });
      const pages: number[][] = [];
      for (let after = 0; ; ) {
        const page = await lookup.offlineJournal({ after, limit: 2 });
        if (page.length === 0) break;
        pages.push(page.map((e) => e.amount));
        after = page.at(-1)!.id;
      }
      expect(pages).toEqual([[1000, 2000], [3000, 4000], [5000]]);
      expect(await lookup.offlineJournal()).toHaveLength(5); // default page: the oldest 1,000
      await expect(lookup.offlineJournal({ limit: -1 })).rejects.toMatchObject({ code: 'bad_request' });
    });

    it('answers a code typed with surrounding spaces as the code itself, online and offline, and journals it so', async () => {
      const online = await lookup.validateCoupon(`  ${MOCK_CODES.welcomeCoupon}\t`, { amount: 32000 });
      expect(online).toMatchObject({ ok: true, discount: 3200, source: 'network', coupon: { coupon_code: 'WELCOME10' } });
      expect(requestsFor(mock, MOCK_CODES.welcomeCoupon).map((r) => r.path)).toContain(`/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`);
      await goOffline(mock, lookup);
      const offline = await lookup.validateCoupon(` ${MOCK_CODES.welcomeCoupon}\n`, { amount: 32000 });
      expect(offline).toMatchObject({ ok: true, discount: 3200, source: 'local', journaled: true });
      expect(await lookup.offlineJournal()).toMatchObject([{ code: 'WELCOME10' }]);
      expect((await next(lookup.coupon(' WELCOME10 '))).data?.coupon_code).toBe('WELCOME10');
    });
  });
});
