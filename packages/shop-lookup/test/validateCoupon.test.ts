import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import { BASE, listen, relaysPerTest } from '@shop-lookup/test-kit/relayUtils';
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
      expect(v).toMatchObject({
        ok: true,
        discount: 3200,
        kind: 'coupon',
        source: 'network',
        coupon: { coupon_code: 'WELCOME10' },
      });
      expect(v.syncedAt).toBeGreaterThan(Date.now() - 5000);
      const capped = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 100000 });
      expect(capped).toMatchObject({ ok: true, discount: 5000 });
    });

    it('accepts an unused issued coupon and refuses a used one', async () => {
      const open = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 });
      expect(open).toMatchObject({ ok: true, discount: 3200, kind: 'issued', source: 'network' });
      const used = await lookup.validateCoupon(MOCK_CODES.issuedUsed, { amount: 32000, at: AT });
      expect(used).toMatchObject({
        ok: false,
        reason: 'inactive',
        kind: 'issued',
        source: 'network',
        detail: { rule: 'status' },
      });
      expect(used.ok ? '' : used.detail.message).toContain('already used');
      // the accepted issued coupon is journaled although the API decided: the API learns of the use only later
      expect(open).toMatchObject({ journaled: true });
      expect(used).not.toHaveProperty('journaled');
      expect(await lookup.offlineJournal()).toMatchObject([
        {
          code: MOCK_CODES.issuedUnused,
          couponCode: 'WELCOME10',
          ok: true,
          kind: 'issued',
          source: 'network',
          cause: null,
        },
      ]);
    });

    it('caps a fixed-amount discount at the maximum discount (apply_sale_type_max_price), online and offline', async () => {
      mock.upsertCoupon({
        coupon_code: 'FIXED5000-MAX3000',
        status: 'progress',
        apply_sale_price: 5000,
        apply_sale_percent: 0,
        apply_sale_type_max_price: 3000,
        use_period: '',
      });
      expect(await lookup.validateCoupon('FIXED5000-MAX3000', { amount: 32000 })).toMatchObject({
        ok: true,
        discount: 3000,
        source: 'network',
        detail: { message: '5,000 off, capped at 3,000.' },
      });
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon('FIXED5000-MAX3000', { amount: 32000 })).toMatchObject({
        ok: true,
        discount: 3000,
        source: 'local',
      });
    });

    it('warns, never refuses, when the use count reached the issued count: online and offline, and for an issued coupon by its coupon', async () => {
      const record = mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!;
      expect(await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).not.toHaveProperty('warnings');
      mock.upsertCoupon({ ...record, type_coupon_create_count: 1520, type_coupon_use_count: 1520 });
      expect((await lookup.sync()).ok).toBe(true);
      const online = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
      expect(online).toMatchObject({
        ok: true,
        discount: 3200,
        warnings: [{ code: 'use_count_reached', field: 'type_coupon_use_count', value: 1520 }],
      });
      expect(online.ok ? online.warnings![0]!.message : '').toBe(
        'This coupon has been used 1,520 times, and 1,520 were issued; the shop API does not say whether that is a limit. Check it in the shop admin if in doubt.',
      );
      // the issued coupon copies its coupon's counts as they were (611 of 1,520); the coupon's own record says 1,520
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 })).toMatchObject({
        ok: true,
        kind: 'issued',
        warnings: [{ code: 'use_count_reached' }],
      });
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({
        ok: true,
        source: 'local',
        warnings: [{ code: 'use_count_reached' }],
      });
    });

    it('says expired for a coupon whose period is over', async () => {
      const v = await lookup.validateCoupon(MOCK_CODES.expiredCoupon, { amount: 60000 });
      expect(v).toMatchObject({
        ok: false,
        reason: 'expired',
        source: 'network',
        detail: { rule: 'period', field: 'use_period' },
      });
    });

    it('says below_minimum with both numbers in words', async () => {
      const v = await lookup.validateCoupon(MOCK_CODES.fixedCoupon, { amount: 19999, at: AT });
      expect(v).toMatchObject({
        ok: false,
        reason: 'below_minimum',
        detail: { message: 'Order 19,999 is below the minimum of 20,000 for this coupon.' },
      });
    });

    it('says not_found for a code the API confirms in neither code space', async () => {
      const v = await lookup.validateCoupon('NO-SUCH-CODE', { amount: 32000 });
      expect(v).toMatchObject({ ok: false, reason: 'not_found', source: 'network', detail: { rule: 'lookup' } });
      expect(
        requestsFor(mock, 'NO-SUCH-CODE')
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/v2/shop/coupons/NO-SUCH-CODE', '/v2/shop/issue-coupons/NO-SUCH-CODE']);
    });

    it('asks the API even with a local copy: an issued coupon used at another till a moment ago is refused', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      const record = mock.data.issuedCoupons.find((c) => c.coupon_issue_code === MOCK_CODES.issuedUnused)!;
      mock.upsertIssuedCoupon({
        ...record,
        status: 'complete',
        use_date: '2026-06-01 11:59:00',
        shop_order_code: '202606010000001',
      });
      const v = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, at: AT });
      expect(v).toMatchObject({ ok: false, reason: 'inactive', source: 'network' });
      expect(requestsFor(mock, MOCK_CODES.issuedUnused).map((r) => r.path)).toContain(
        `/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`,
      );
    });

    it('decides from local data (source local) when the API answers with an error, says which, and journals it with the reason', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      const path = `/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`;
      const faults = [
        ['http500', 'server_error'],
        ['code-999', 'maintenance'],
        ['throttle', 'rate_limited'],
        ['code-19', 'server_error'],
      ] as const;
      for (const [fault, cause] of faults) {
        mock.clearFaults();
        mock.inject(fault, { path, times: Infinity });
        const v = await lookup.validateCoupon(MOCK_CODES.issuedUnused, {
          amount: 32000,
          orderId: `order-${fault}`,
          acceptRepeatUse: true,
        });
        expect(v, fault).toMatchObject({
          ok: true,
          discount: 3200,
          kind: 'issued',
          source: 'local',
          journaled: true,
          detail: { error: { code: cause } },
        });
        const entry = (await lookup.offlineJournal()).at(-1);
        expect(entry, fault).toMatchObject({
          code: MOCK_CODES.issuedUnused,
          orderId: `order-${fault}`,
          ok: true,
          source: 'local',
          cause,
        });
      }
      expect(await lookup.offlineJournal()).toHaveLength(faults.length);
      mock.clearFaults();
      mock.inject('http500', { path: `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`, times: Infinity });
      const v = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
      expect(v).toMatchObject({ ok: true, discount: 3200, source: 'local', journaled: true });
      expect(v.detail?.error).toMatchObject({
        code: 'server_error',
        status: 500,
        message: expect.stringContaining(`[GET] ${mock.url}/v2/shop/coupons/WELCOME10: 500`),
      });
    });

    it('says unreadable, never ok, when the API now sends a record of the coupon this till cannot read', async () => {
      const record = mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!;
      mock.upsertCoupon({ ...record, status: 'stop', apply_sale_percent: { value: 10 } });
      const v = await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
      expect(v).toMatchObject({
        ok: false,
        reason: 'unreadable',
        source: 'local',
        coupon: { coupon_code: 'WELCOME10' },
        detail: { rule: 'record' },
      });
      expect(v.ok ? '' : v.detail.message).toMatch(/cannot read.*may be out of date.*apply_sale_percent/);
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({
        ok: false,
        reason: 'unreadable',
      });
    });

    it('says unreadable, never ok, when the API now sends a record of an issued coupon this till cannot read', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      const record = mock.data.issuedCoupons.find((c) => c.coupon_issue_code === MOCK_CODES.issuedUnused)!;
      // used upstream, and its new record fails the schema in one field
      mock.upsertIssuedCoupon({
        ...record,
        status: 'complete',
        use_date: '2026-06-01 11:59:00',
        shop_order_code: '202606010000001',
        apply_sale_percent: { value: 10 },
      });
      const v = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, at: AT });
      expect(v).toMatchObject({
        ok: false,
        reason: 'unreadable',
        kind: 'issued',
        source: 'local',
        detail: { rule: 'record' },
      });
      expect(v.ok ? '' : v.detail.message).toMatch(/cannot read.*apply_sale_percent/);
      expect(await next(lookup.issuedCoupon(MOCK_CODES.issuedUnused), (r) => r.error !== null)).toMatchObject({
        data: { status: 'progress' },
        error: { code: 'invalid_record' },
      });
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, at: AT })).toMatchObject({
        ok: false,
        reason: 'unreadable',
        source: 'local',
      });
    });

    it('marks an issued coupon prefetched with an unreadable record: unreadable offline, and readable again once the API sends a good record', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      const record = mock.data.issuedCoupons.find((c) => c.coupon_issue_code === MOCK_CODES.issuedUnused)!;
      mock.upsertIssuedCoupon({ ...record, apply_sale_percent: 'ten' });
      const report = await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused]);
      expect(report).toMatchObject({ ok: false, rejected: 1 });
      mock.setDown(true);
      expect((await lookup.sync()).ok).toBe(false);
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, at: AT })).toMatchObject({
        ok: false,
        reason: 'unreadable',
        kind: 'issued',
      });
      // a code whose only record was unreadable: unreadable, never unknown_offline or not_found
      mock.setDown(false);
      mock.upsertIssuedCoupon({ ...record, coupon_issue_code: 'IC-NEW-BAD', apply_sale_percent: 'ten' });
      expect((await lookup.prefetchIssuedCoupons(['IC-NEW-BAD'])).rejected).toBe(1);
      mock.upsertIssuedCoupon(record);
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      mock.setDown(true);
      expect((await lookup.sync()).ok).toBe(false);
      expect(await lookup.validateCoupon('IC-NEW-BAD', { amount: 32000, at: AT })).toMatchObject({
        ok: false,
        reason: 'unreadable',
        source: 'local',
      });
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, at: AT })).toMatchObject({
        ok: true,
        kind: 'issued',
        source: 'local',
      });
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
      await expect(lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: Number.NaN })).rejects.toMatchObject({
        code: 'bad_request',
      });
      await expect(lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: -1 })).rejects.toMatchObject({
        code: 'bad_request',
      });
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
      expect(v).toMatchObject({
        ok: false,
        reason: 'unknown_offline',
        source: 'local',
        syncedAt: null,
        detail: { rule: 'lookup' },
      });
    });

    it('says not_found offline for a code the API confirmed absent in both code spaces before', async () => {
      expect(await lookup.validateCoupon('GONE-1', { amount: 1 })).toMatchObject({
        reason: 'not_found',
        source: 'network',
      });
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

  describe('an issued coupon and its coupon', () => {
    const welcome = () => mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!;

    it('refuses an issued coupon whose coupon the till knows as stopped: online (also from a fresh answer, and from the local copy) and offline', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      mock.upsertCoupon({ ...welcome(), status: 'stop' });
      expect((await lookup.sync()).ok).toBe(true);
      const online = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 });
      expect(online).toMatchObject({
        ok: false,
        reason: 'inactive',
        kind: 'issued',
        source: 'network',
        detail: { rule: 'parent', field: 'status', value: 'stop' },
      });
      expect(online.ok ? '' : online.detail.message).toBe(
        'This issued coupon belongs to coupon "WELCOME10": This coupon is not active (status "stop").',
      );
      mock.inject('http500', { path: `/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`, times: Infinity });
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 })).toMatchObject({
        ok: false,
        reason: 'inactive',
        source: 'local',
        detail: { rule: 'parent' },
      });
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 })).toMatchObject({
        ok: false,
        reason: 'inactive',
        source: 'local',
        detail: { rule: 'parent' },
      });
    });

    it("refuses an issued coupon by its coupon's period, and passes it while the coupon is active", async () => {
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 })).toMatchObject({ ok: true });
      mock.upsertCoupon({ ...welcome(), use_period: '2025-01-01 00:00:00 ~ 2025-12-31 23:59:59' });
      expect((await lookup.sync()).ok).toBe(true);
      const v = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, at: AT });
      expect(v).toMatchObject({
        ok: false,
        reason: 'expired',
        kind: 'issued',
        detail: { rule: 'parent', field: 'use_period' },
      });
    });

    it('refuses an issued coupon whose coupon a complete listing no longer has, offline too', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      expect(mock.removeCoupon(MOCK_CODES.welcomeCoupon)).toBe(true);
      expect((await lookup.sync()).ok).toBe(true);
      await goOffline(mock, lookup);
      const v = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 });
      expect(v).toMatchObject({
        ok: false,
        reason: 'inactive',
        kind: 'issued',
        source: 'local',
        detail: { rule: 'parent', field: 'coupon_code', value: 'WELCOME10' },
      });
      expect(v.ok ? '' : v.detail.message).toMatch(/belongs to coupon "WELCOME10", which the shop no longer has/);
    });

    it('lets the issued record decide offline when its coupon came after the last listing (the till cannot tell it gone)', async () => {
      // created and issued after the till's last listing: the listing without it says nothing of it
      mock.upsertCoupon({ ...welcome(), coupon_code: 'NEW-AFTER-LISTING' });
      const record = mock.data.issuedCoupons.find((c) => c.coupon_issue_code === MOCK_CODES.issuedUnused)!;
      mock.upsertIssuedCoupon({ ...record, coupon_issue_code: 'IC-NEW-AFTER', coupon_code: 'NEW-AFTER-LISTING' });
      expect((await lookup.prefetchIssuedCoupons(['IC-NEW-AFTER'])).ok).toBe(true);
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon('IC-NEW-AFTER', { amount: 32000 })).toMatchObject({
        ok: true,
        kind: 'issued',
        source: 'local',
      });
    });

    it('on a storefront without the coupon list: asks the API for the coupon online; offline, with nothing known of it, the issued record decides', async () => {
      const shop = lookupFor(mock, { coupons: 'byCode', products: [MOCK_CODES.firstProductNo] });
      try {
        expect((await shop.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
        // nothing known of WELCOME10 on this device: offline, the issued coupon's own fields decide
        await goOffline(mock, shop);
        expect(await shop.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 })).toMatchObject({
          ok: true,
          kind: 'issued',
          source: 'local',
        });
        mock.setDown(false);
        expect((await shop.sync()).ok).toBe(true);
        mock.upsertCoupon({ ...welcome(), status: 'stop' });
        mock.resetRequests();
        // (a storefront never asks for issued coupons: the copy it read through decides, its coupon is asked for)
        const online = await shop.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 });
        expect(online).toMatchObject({
          ok: false,
          reason: 'inactive',
          source: 'local',
          journaled: true,
          detail: { rule: 'parent', value: 'stop' },
        });
        expect(requestsFor(mock, MOCK_CODES.welcomeCoupon).map((r) => r.path)).toEqual([
          `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`,
        ]);
        expect((await shop.offlineJournal()).at(-1)).toMatchObject({ source: 'local', cause: 'not_asked' });
        await goOffline(mock, shop);
        expect(await shop.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000 })).toMatchObject({
          ok: false,
          reason: 'inactive',
          detail: { rule: 'parent' },
        });
      } finally {
        await shop.close();
      }
    });
  });

  describe("this till's own uses of an issued coupon", () => {
    const openRecord = () => mock.data.issuedCoupons.find((c) => c.coupon_issue_code === MOCK_CODES.issuedUnused)!;

    it('refuses a second sale of one issued coupon on an offline till, naming the first, until the host overrides it', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      await goOffline(mock, lookup);
      const first = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId: 'A-1', at: AT });
      expect(first).toMatchObject({ ok: true, kind: 'issued', source: 'local', journaled: true });
      const [sale] = await lookup.offlineJournal();

      const second = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 40000, orderId: 'A-2' });
      expect(second).toMatchObject({
        ok: false,
        reason: 'used_on_this_till',
        kind: 'issued',
        source: 'local',
        journaled: true,
        detail: {
          rule: 'use',
          discount: 4000,
          earlierUse: {
            journalId: sale!.id,
            journalKey: sale!.key,
            orderId: 'A-1',
            amount: 32000,
            orderAt: AT,
            at: sale!.at,
          },
        },
      });
      expect(second.ok ? '' : second.detail.message).toMatch(
        /already accepted this issued coupon at .* \(order A-1, 32,000, journal entry \d+\).*does not show that use yet/,
      );
      // a third without an order reference: refused too
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 20000 })).toMatchObject({
        ok: false,
        reason: 'used_on_this_till',
      });

      // the cashier checks the first order again (its amount changed): not a second use
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 35000, orderId: 'A-1' })).toMatchObject({
        ok: true,
        discount: 3500,
      });

      // the manager confirms the first sale was cancelled: accepted, and the override is on the record
      const again = await lookup.validateCoupon(MOCK_CODES.issuedUnused, {
        amount: 40000,
        orderId: 'A-2',
        acceptRepeatUse: true,
      });
      expect(again).toMatchObject({ ok: true, discount: 4000, overrides: ['repeat_use'], journaled: true });
      const journal = await lookup.offlineJournal();
      expect(journal.map((e) => [e.orderId, e.ok, e.reason, e.overrides])).toEqual([
        ['A-1', true, null, []],
        ['A-2', false, 'used_on_this_till', []],
        [null, false, 'used_on_this_till', []],
        ['A-1', true, null, []],
        ['A-2', true, null, ['repeat_use']],
      ]);
    });

    it('refuses the second use online too, while the API still says unused, and forgets the use once the API shows it used', async () => {
      const open = { ...openRecord() };
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId: 'B-1' })).toMatchObject({
        ok: true,
        source: 'network',
        journaled: true,
      });
      const second = await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId: 'B-2' });
      expect(second).toMatchObject({
        ok: false,
        reason: 'used_on_this_till',
        source: 'network',
        detail: { earlierUse: { orderId: 'B-1' } },
      });
      // the shop's order system recorded the use: the API's own word refuses it from now on
      mock.upsertIssuedCoupon({ ...open, status: 'complete', use_date: '2026-06-01 12:00:00', shop_order_code: 'B-1' });
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId: 'B-2' })).toMatchObject({
        ok: false,
        reason: 'inactive',
        detail: { rule: 'status' },
      });
      // and if the shop gives the coupon back (the order was cancelled), it is usable again: the use was confirmed,
      // then ended
      mock.upsertIssuedCoupon(open);
      expect(await lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId: 'B-3' })).toMatchObject({
        ok: true,
        source: 'network',
      });
    });

    it('keeps a use the API has not confirmed through clearing the journal and through clear(), and across a restart', async () => {
      const dbName = 'uses-kept';
      const till = lookupFor(mock, { dbName });
      let again: Lookup | null = null;
      try {
        expect((await till.sync()).ok).toBe(true);
        expect(await till.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId: 'C-1' })).toMatchObject({
          ok: true,
        });
        const entries = await till.offlineJournal();
        expect(await till.clearOfflineJournal(entries.at(-1)!.id)).toBe(1);
        await till.clear();
        await till.close();
        again = lookupFor(mock, { indexedDB: till.idb, dbName });
        expect((await again.sync()).ok).toBe(true);
        expect(await again.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId: 'C-2' })).toMatchObject({
          ok: false,
          reason: 'used_on_this_till',
          detail: { earlierUse: { orderId: 'C-1', journalId: entries.at(-1)!.id } },
        });
        // clear({ discardJournal: true }) drops the journal and the uses it recorded
        await again.clear({ discardJournal: true });
        expect((await again.sync()).ok).toBe(true);
        expect(await again.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId: 'C-2' })).toMatchObject({
          ok: true,
        });
      } finally {
        await till.close();
        await again?.close();
      }
    });

    it('decides checks of one issued coupon made at once one after the other: each later one sees the first use', async () => {
      expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUnused])).ok).toBe(true);
      await goOffline(mock, lookup);
      const orders = ['E-1', 'E-2', 'E-3', 'E-4', 'E-5'];
      const all = await Promise.all(
        orders.map((orderId) => lookup.validateCoupon(MOCK_CODES.issuedUnused, { amount: 32000, orderId })),
      );
      expect(all.map((v) => (v.ok ? 'ok' : v.reason))).toEqual([
        'ok',
        ...orders.slice(1).map(() => 'used_on_this_till'),
      ]);
    });

    it('never counts a plain coupon as used: a coupon code serves many sales', async () => {
      for (const orderId of ['D-1', 'D-2']) {
        expect(await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000, orderId })).toMatchObject({
          ok: true,
        });
      }
    });
  });

  describe('a coupon the API answers under another code', () => {
    it('finds it under the code asked, online and then offline, and the lookup shows it too', async () => {
      // an API that matches codes without regard to case: asked for welcome10, it answers with WELCOME10
      const caseless: typeof fetch = (input, init) =>
        fetch(String(input).replace('/v2/shop/coupons/welcome10', '/v2/shop/coupons/WELCOME10'), init);
      const till = lookupFor(mock, { fetch: caseless });
      try {
        expect((await till.sync()).ok).toBe(true);
        const online = await till.validateCoupon('welcome10', { amount: 32000 });
        expect(online).toMatchObject({
          ok: true,
          discount: 3200,
          source: 'network',
          coupon: { coupon_code: 'WELCOME10' },
        });
        expect((await next(till.coupon('welcome10'), (r) => r.data !== null)).data?.coupon_code).toBe('WELCOME10');
        await goOffline(mock, till);
        const offline = await till.validateCoupon('welcome10', { amount: 32000 });
        expect(offline).toMatchObject({
          ok: true,
          discount: 3200,
          source: 'local',
          coupon: { coupon_code: 'WELCOME10' },
        });
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
        expect(await strict.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({
          ok: true,
          source: 'local',
        });
        clock += 1;
        const v = await strict.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
        expect(v).toMatchObject({
          ok: false,
          reason: 'stale',
          source: 'local',
          coupon: { coupon_code: 'WELCOME10' },
          detail: { rule: 'freshness', discount: 3200 },
        });
        expect(v.ok ? 0 : v.detail.dataAgeMs).toBe(clock - syncedAt);
        const accepted = await strict.validateCoupon(MOCK_CODES.welcomeCoupon, {
          amount: 32000,
          acceptStale: true,
          orderId: 'POS1-0042',
          at: AT,
        });
        expect(accepted).toMatchObject({
          ok: true,
          discount: 3200,
          source: 'local',
          overrides: ['stale'],
          journaled: true,
        });
        // the journal tells the accepted stale verdict from a plain yes, and names the order
        const [fresh, stale, acceptedEntry] = await strict.offlineJournal();
        expect(fresh).toMatchObject({
          ok: true,
          overrides: [],
          orderId: null,
          orderAt: syncedAt + hour,
          at: syncedAt + hour,
        });
        expect(stale).toMatchObject({ ok: false, reason: 'stale', overrides: [] });
        expect(acceptedEntry).toMatchObject({
          code: 'WELCOME10',
          couponCode: 'WELCOME10',
          ok: true,
          discount: 3200,
          overrides: ['stale'],
          orderId: 'POS1-0042',
          amount: 32000,
          orderAt: AT,
          at: clock,
          syncedAt,
          source: 'local',
          cause: 'offline',
        });
      } finally {
        await strict.close();
        strict.dispose();
      }
    });

    it('is not stale with the default 24 h window', async () => {
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({
        ok: true,
        source: 'local',
      });
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

    it("judges a coupon period by the API's time when the till's clock is two days behind, and shows the offset in status()", async () => {
      const seconds = (ms: number) => Math.floor(ms / 1000);
      mock.upsertCoupon({
        coupon_code: 'ENDED-YESTERDAY',
        status: 'progress',
        apply_sale_percent: 10,
        use_period: `${seconds(Date.now() - 30 * DAY)} ~ ${seconds(Date.now() - DAY)}`,
      });
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
        expect(await behind.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({
          ok: true,
          source: 'local',
        });
      } finally {
        await behind.close();
        behind.dispose();
      }
    });

    it("keeps the offset it learned across a restart: a till two days behind, restarted offline, still judges by the API's time", async () => {
      const seconds = (ms: number) => Math.floor(ms / 1000);
      mock.upsertCoupon({
        coupon_code: 'ENDED-YESTERDAY',
        status: 'progress',
        apply_sale_percent: 10,
        use_period: `${seconds(Date.now() - 30 * DAY)} ~ ${seconds(Date.now() - DAY)}`,
      });
      const idb = new IDBFactory();
      const dbName = 'clock-kept';
      const behind = () => Date.now() - 2 * DAY;
      const first = lookupWithEngine(mock, { now: behind, indexedDB: idb, IDBKeyRange }, { dbName });
      expect((await first.sync()).ok).toBe(true);
      // clear() empties the database, the kept offset with it: it is kept again at once
      await first.clear();
      expect((await first.sync()).ok).toBe(true);
      await first.close();
      first.dispose();
      // restarted with the API out of reach: no answer tells the time
      mock.setDown(true);
      const till = lookupWithEngine(mock, { now: behind, indexedDB: idb, IDBKeyRange }, { dbName });
      try {
        expect((await till.sync()).ok).toBe(false);
        // just synced by the API's time: fresh, not "stamped in the future"
        expect(await till.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({
          ok: true,
          source: 'local',
        });
        // expired yesterday by the API's time, even with stale data accepted
        expect(await till.validateCoupon('ENDED-YESTERDAY', { amount: 32000, acceptStale: true })).toMatchObject({
          ok: false,
          reason: 'expired',
          source: 'local',
        });
        const status = await next(till.status(), (s) => s.clockOffsetMs !== undefined);
        expect(status.clockOffsetMs! / DAY).toBeCloseTo(-2, 3);
      } finally {
        await till.close();
        till.dispose();
      }
    });

    it('takes data stamped by a clock that was ahead as old, not fresh: a 47-hour-old copy fails a 24-hour rule', async () => {
      const idb = new IDBFactory();
      const dbName = 'clock-ahead';
      // a till 47 hours ahead whose API answers carry no Date: its sync is stamped 47 hours in the future
      const ahead = lookupWithEngine(
        mock,
        { now: () => Date.now() + 47 * HOUR, fetch: noDate, indexedDB: idb, IDBKeyRange },
        { dbName },
      );
      expect((await ahead.sync()).ok).toBe(true);
      await ahead.close();
      ahead.dispose();
      // the clock was put right; the API is out of reach, so the stamps cannot be checked
      mock.setDown(true);
      const till = lookupFor(mock, { indexedDB: idb, dbName });
      try {
        expect((await till.sync()).ok).toBe(false);
        const v = await till.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 });
        expect(v).toMatchObject({
          ok: false,
          reason: 'stale',
          source: 'local',
          detail: { rule: 'freshness', discount: 3200 },
        });
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
          {
            code: 'NOPE-OFFLINE',
            amount: 7000,
            ok: false,
            reason: 'unknown_offline',
            discount: null,
            kind: null,
            syncedAt: null,
          },
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
      await expect(lookup.clearOfflineJournal(none as unknown as number)).rejects.toMatchObject({
        code: 'bad_request',
        message: expect.stringMatching(/nothing was deleted/),
      });
      await expect(lookup.clearOfflineJournal(null as unknown as number)).rejects.toMatchObject({
        code: 'bad_request',
      });
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
      for (let amount = 1000; amount <= 5000; amount += 1000)
        await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount });
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
      expect(online).toMatchObject({
        ok: true,
        discount: 3200,
        source: 'network',
        coupon: { coupon_code: 'WELCOME10' },
      });
      expect(requestsFor(mock, MOCK_CODES.welcomeCoupon).map((r) => r.path)).toContain(
        `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`,
      );
      await goOffline(mock, lookup);
      const offline = await lookup.validateCoupon(` ${MOCK_CODES.welcomeCoupon}\n`, { amount: 32000 });
      expect(offline).toMatchObject({ ok: true, discount: 3200, source: 'local', journaled: true });
      expect(await lookup.offlineJournal()).toMatchObject([{ code: 'WELCOME10' }]);
      expect((await next(lookup.coupon(' WELCOME10 '))).data?.coupon_code).toBe('WELCOME10');
    });

    it('finds a code typed in another Unicode form (NFD) or with invisible characters (zero-width space, BOM), online and offline', async () => {
      const korean = { ...mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)! };
      korean.coupon_code = '환영쿠폰10'; // NFC, as the shop API keeps it
      mock.upsertCoupon(korean);
      expect((await lookup.sync()).ok).toBe(true);
      const nfd = '환영쿠폰10'.normalize('NFD');
      expect(nfd).not.toBe(korean.coupon_code); // (as some Korean keyboards send it)
      for (const typed of [nfd, `\u200b${MOCK_CODES.welcomeCoupon}`, `\ufeffWELCOME\u200d10\u2060`]) {
        expect(await lookup.validateCoupon(typed, { amount: 32000 }), JSON.stringify(typed)).toMatchObject({
          ok: true,
          discount: 3200,
          source: 'network',
        });
      }
      expect((await next(lookup.coupon(nfd))).data?.coupon_code).toBe('환영쿠폰10');
      await goOffline(mock, lookup);
      expect(await lookup.validateCoupon(nfd, { amount: 32000 })).toMatchObject({ ok: true, source: 'local' });
      expect((await lookup.offlineJournal()).at(-1)).toMatchObject({ code: '환영쿠폰10' });
      // a code that is really unknown is quoted with what cannot be seen escaped
      const unknown = await lookup.validateCoupon('NOPE\u00a01', { amount: 32000 });
      expect(unknown.ok ? '' : unknown.detail.message).toContain('"NOPE\\u00a01"');
    });
  });

  describe('a till set up wrong says what happened, with the URL it asked', () => {
    const { relayWith } = relaysPerTest();
    const tills: ShopLookup[] = [];
    afterEach(async () => {
      for (const t of tills.splice(0)) await t.close();
    });
    const till = (url: string, options: Parameters<typeof lookupFor>[1] = {}) => {
      const t = lookupFor({ url }, options);
      tills.push(t);
      return t;
    };
    const ORDER = { amount: 32000 };

    it('wrong credentials: bad_credentials in the report, status() and the verdict, never "cannot be reached"', async () => {
      const t = till(mock.url, { auth: { key: 'wrong', secret: 'wrong' } });
      const report = await t.sync();
      expect(report.errors).toMatchObject([
        { code: 'bad_credentials', message: expect.stringContaining(`[POST] ${mock.url}/v2/auth: 401`) },
      ]);
      expect((await next(t.status(), (st) => st.phase !== 'syncing')).lastError).toMatchObject({
        code: 'bad_credentials',
      });
      const v = await t.validateCoupon('WELCOME10', ORDER);
      expect(v).toMatchObject({ ok: false, reason: 'unchecked', detail: { error: { code: 'bad_credentials' } } });
      expect(v.detail!.message).not.toMatch(/cannot be reached/);
    });

    it('a relay with a wrong key: the verdict says bad_credentials, naming the relay URL asked', async () => {
      const f = await relayWith({ key: 'wrong', secret: 'wrong' });
      const t = till(`${f.origin}${BASE}`, { auth: undefined });
      const v = await t.validateCoupon('WELCOME10', ORDER);
      expect(v).toMatchObject({
        ok: false,
        reason: 'unchecked',
        detail: {
          error: {
            code: 'bad_credentials',
            message: expect.stringContaining(`${f.origin}${BASE}/v2/shop/coupons/WELCOME10: 401`),
          },
        },
      });
    });

    it('a mistyped baseUrl that answers 404 pages: unsupported at once, not retried, and the verdict says so', async () => {
      const site = await listen((_req, res) => {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<!doctype html><title>Not found</title>');
      });
      try {
        const asked: string[] = [];
        const recording: typeof fetch = (input, init) => {
          asked.push(String(input));
          return fetch(input, init);
        };
        const t = till(`${site.origin}/shop-apii`, { auth: undefined, fetch: recording });
        const report = await t.sync();
        expect(report.errors).toMatchObject([
          {
            code: 'unsupported',
            message: expect.stringMatching(
              /^Nothing at http:\/\/127\.0\.0\.1:\d+\/shop-apii answers as the shop API: \[GET\] http:.*\/shop-apii\/v2\/shop\/coupons: 404/,
            ),
          },
        ]);
        expect(asked.filter((u) => u.includes('/v2/shop/coupons'))).toHaveLength(1);
        expect((await next(t.status(), (st) => st.phase !== 'syncing')).lastError?.code).toBe('unsupported');
        expect(await t.validateCoupon('WELCOME10', ORDER)).toMatchObject({
          ok: false,
          reason: 'unchecked',
          detail: { error: { code: 'unsupported' } },
        });
      } finally {
        site.server.closeAllConnections();
        site.server.close();
      }
    });

    it("a baseUrl that misses its relay's mount: unsupported, naming the whole baseUrl and what the relay said", async () => {
      const f = await relayWith({}, {}, { listed: true });
      const t = till(`${f.origin}/shop-apii`, { auth: undefined });
      const report = await t.sync();
      expect(report.errors).toMatchObject([
        {
          code: 'unsupported',
          message: expect.stringMatching(
            /^Nothing at http:\/\/127\.0\.0\.1:\d+\/shop-apii answers as the shop API: \[GET\] http:.*\/shop-apii\/v2\/shop\/coupons: 404 came back saying "NO SUCH SERVICE: this path is not served here"\. Check baseUrl/,
          ),
        },
      ]);
      expect(await t.validateCoupon('WELCOME10', ORDER)).toMatchObject({
        ok: false,
        reason: 'unchecked',
        detail: { error: { code: 'unsupported' } },
      });
    });

    it('a code its relay refuses as too long (414) or as a bad path (400): bad_request, not "cannot be reached"', async () => {
      const f = await relayWith({}, {}, { listed: true });
      const t = till(`${f.origin}${BASE}`, { auth: undefined, coupons: 'byCode' });
      for (const [code, status] of [
        ['X'.repeat(3000), 414],
        ['a/../b', 400],
      ] as const) {
        const v = await t.validateCoupon(code, ORDER);
        expect(v).toMatchObject({
          ok: false,
          reason: 'unchecked',
          detail: { error: { code: 'bad_request', status, apiCode: -10 } },
        });
        expect(v.detail!.error!.message).toContain(`${f.origin}${BASE}/v2/shop/coupons/`);
      }
    });

    it('refuses a relative baseUrl without its leading slash at once (bad_options)', () => {
      expect(() => lookupFor({ url: 'shop-api' })).toThrow(
        expect.objectContaining({
          code: 'bad_options',
          message: expect.stringMatching(/starts with '\/'.*"shop-api"/),
        }),
      );
    });
  });
});
