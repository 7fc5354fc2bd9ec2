import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import { confirmed, lookupFor, lookupWithEngine, next, record, startMock, waitFor } from './utils';

/** Ten minutes: older than the default refresh interval (5 minutes), so everything local is due for a refresh. */
const LATER = 10 * 60 * 1000;

const PRODUCT = 13805; // option no 12 has code "SIZE"; option no 3 has code "12"
const ENCODED_CODE = '봄 세일/10%?#&';

describe('the six lookups', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup & { idb: IDBFactory };

  beforeEach(async () => {
    mock = await startMock();
    lookup = lookupFor(mock, { products: [PRODUCT] });
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  const issuedCode = () => String(mock.data.issuedCoupons[0]!.coupon_issue_code);

  it('answers each of the six lookups with what the API holds', async () => {
    const report = await lookup.sync();
    expect(report.ok).toBe(true);

    const all = await confirmed(lookup.coupons());
    expect(all.data.map((c) => c.coupon_code).sort()).toEqual(
      mock.data.coupons.map((c) => String(c.coupon_code)).sort(),
    );

    const welcome = await confirmed(lookup.coupon('WELCOME10'));
    expect(welcome.data).toMatchObject({ coupon_code: 'WELCOME10', apply_sale_percent: 10 });

    const issued = await next(lookup.issuedCoupon(issuedCode()), (r) => r.data !== null);
    expect(issued.data?.coupon_issue_code).toBe(issuedCode());
    expect(issued.syncedAt).not.toBeNull();

    const options = await confirmed(lookup.productOptions(PRODUCT));
    expect(options.data.map((o) => o.no)).toEqual(
      mock.data.products
        .get(PRODUCT)!
        .map((o) => Number(o.no))
        .sort((a, b) => a - b),
    );
    expect(options.data.every((o) => o.product_no === PRODUCT && Array.isArray(o.value_list))).toBe(true);

    const byNo = await confirmed(lookup.productOptionByNo(PRODUCT, 12));
    expect(byNo.data).toMatchObject({ no: 12, code: 'SIZE' });

    const byCode = await confirmed(lookup.productOptionByCode(PRODUCT, '12'));
    expect(byCode.data).toMatchObject({ no: 3, code: '12' });
  });

  it('never confuses option number 12 with option code "12", even for a product it never synced', async () => {
    const other = lookupFor(mock); // tracks no product: both lookups read through
    try {
      const byCode = await next(other.productOptionByCode(PRODUCT, '12'), (r) => r.data !== null);
      expect(byCode.data).toMatchObject({ no: 3, code: '12' });
      const byNo = await next(other.productOptionByNo(PRODUCT, 12), (r) => r.data !== null);
      expect(byNo.data).toMatchObject({ no: 12, code: 'SIZE' });
      const noSuchCode = await confirmed(other.productOptionByCode(PRODUCT, '999'));
      expect(noSuchCode.data).toBeNull();
    } finally {
      await other.close();
    }
  });

  it('sends codes with / ? # % & spaces and Korean text to the right endpoint', async () => {
    // the engine's clock, moved by the test: once the listing is old, the lookup refreshes its item by itself
    let clock = Date.now();
    const fresh = lookupWithEngine(mock, { now: () => clock });
    try {
      expect((await fresh.sync()).ok).toBe(true);
      clock += LATER;
      mock.resetRequests();
      const coupon = await next(fresh.coupon(ENCODED_CODE), (r) => r.syncedAt === clock && !r.fetching);
      expect(coupon.data?.coupon_code).toBe(ENCODED_CODE);
      const single = mock.requests.find((r) => r.path === `/v2/shop/coupons/${ENCODED_CODE}`);
      expect(single?.rawPath).toBe(`/v2/shop/coupons/${encodeURIComponent(ENCODED_CODE)}`);
      expect(single?.code).toBe(200);
    } finally {
      await fresh.close();
      fresh.dispose();
    }
  });

  it('says null with a syncedAt for a code the API confirmed does not exist', async () => {
    const missing = await confirmed(lookup.issuedCoupon('NO-SUCH-ISSUE'));
    expect(missing.data).toBeNull();
    expect(missing.error).toBeNull();
  });

  it('emits a live update when a sync changes a coupon', async () => {
    await lookup.sync();
    const seen = record(lookup.coupon('WELCOME10'));
    const before = await next(lookup.coupon('WELCOME10'));
    await waitFor(() => expect(seen.values.length).toBeGreaterThan(0));
    expect(seen.values.every((v) => v.data?.name !== '바뀐 이름')).toBe(true);
    mock.upsertCoupon({ ...mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!, name: '바뀐 이름' });
    await lookup.sync();
    // the subscription open since before the sync is told, without subscribing again
    await waitFor(() => expect(seen.values.at(-1)?.data?.name).toBe('바뀐 이름'));
    seen.stop();
    expect(seen.values.at(-1)!.syncedAt!).toBeGreaterThanOrEqual(before.syncedAt!);
  });

  it('does not rewrite records that did not change', async () => {
    await lookup.sync();
    const list = record(lookup.coupons());
    // settled: it has shown the synced list, confirmed and not fetching
    await waitFor(() => expect(list.values.at(-1)).toMatchObject({ fetching: false, syncedAt: expect.any(Number) }));
    const emissionsBefore = list.values.length;
    const syncedBefore = list.values.at(-1)!.syncedAt!;
    const report = await lookup.sync();
    // the list's last word on this sync: its new syncedAt (told after the writes the sync made, if any)
    await waitFor(() => expect(list.values.at(-1)!.syncedAt!).toBeGreaterThan(syncedBefore));
    list.stop();
    expect(report).toMatchObject({ ok: true, written: 0, deleted: 0 });
    expect(report.fetched).toBe(mock.data.coupons.length + mock.data.products.get(PRODUCT)!.length);
    // later emissions tell about fetching and the new syncedAt; the coupons in them are unchanged
    const before = list.values[emissionsBefore - 1]!.data;
    for (const later of list.values.slice(emissionsBefore)) expect(later.data).toEqual(before);
  });

  it('runs one sync at a time: a second caller gets the running one', async () => {
    await lookup.sync();
    mock.resetRequests();
    const [a, b] = await Promise.all([lookup.sync(), lookup.sync()]);
    expect(a).toEqual(b);
    const firstPages = mock.requests.filter((r) => r.path === '/v2/shop/coupons' && r.query.offset === '1');
    expect(firstPages).toHaveLength(1);
  });

  it('renews an expired token once and carries on', async () => {
    await lookup.sync();
    mock.resetRequests();
    mock.expireTokens();
    const report = await lookup.sync();
    expect(report.ok).toBe(true);
    const auths = mock.requests.filter((r) => r.path === '/v2/auth');
    expect(auths).toHaveLength(1);
    expect(mock.requests.filter((r) => r.code === -2)).toHaveLength(1);
  });

  it('reports progress and last sync times in status()', async () => {
    const phases = record(lookup.status());
    await lookup.sync();
    await waitFor(() => expect(phases.values.at(-1)?.phase).toBe('idle'));
    phases.stop();
    expect(phases.values.some((s) => s.phase === 'syncing' && s.progress?.resource === 'coupons')).toBe(true);
    const last = phases.values.at(-1)!;
    expect(last).toMatchObject({ online: true, phase: 'idle', progress: null, lastError: null });
    expect(last.lastSyncedAt.coupons).not.toBeNull();
    expect(last.lastSyncedAt.options).not.toBeNull();
  });
});

describe('the six lookups without the API', () => {
  const UNTRACKED = 13801;
  let mock: MockShopApi;
  let lookup: ShopLookup & { idb: IDBFactory };
  let dbName: string;
  let issued: string;

  // Each lookup once while online, so the data is local: the full sync covers coupons and the tracked product;
  // the issued coupon and the untracked product's options are read through.
  const lookups = (l: ShopLookup) => ({
    coupons: () => l.coupons(),
    coupon: () => l.coupon('WELCOME10'),
    issuedCoupon: () => l.issuedCoupon(issued),
    productOptions: () => l.productOptions(PRODUCT),
    productOptionByNo: () => l.productOptionByNo(UNTRACKED, Number(mock.data.products.get(UNTRACKED)![0]!.no)),
    productOptionByCode: () => l.productOptionByCode(PRODUCT, '12'),
  });

  beforeEach(async () => {
    mock = await startMock();
    issued = String(mock.data.issuedCoupons[0]!.coupon_issue_code);
    dbName = `offline-${Math.random()}`;
    lookup = lookupFor(mock, { products: [PRODUCT], dbName });
    await lookup.sync();
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  async function warm(l: ShopLookup) {
    const online: Record<string, { data: unknown; syncedAt: number | null }> = {};
    for (const [name, open] of Object.entries(lookups(l))) {
      const r = await next(
        open() as never,
        (v: { data: unknown; fetching: boolean; syncedAt: number | null }) =>
          v.data !== null && !v.fetching && v.syncedAt !== null,
      );
      online[name] = { data: (r as { data: unknown }).data, syncedAt: (r as { syncedAt: number }).syncedAt };
    }
    return online;
  }

  it('answers all six from IndexedDB with offline: true and the syncedAt of the last good sync', async () => {
    const online = await warm(lookup);
    await mock.close();
    const report = await lookup.sync();
    expect(report.ok).toBe(false);
    expect(report.errors[0]).toMatchObject({ code: 'network_error' });
    expect(report.errors[0]!.message).toMatch(/Could not reach the shop API/);
    for (const [name, open] of Object.entries(lookups(lookup))) {
      const first = (await next(open() as never)) as { data: unknown; syncedAt: number | null; offline: boolean };
      expect({ name, ...first }).toMatchObject({
        name,
        offline: true,
        data: online[name]!.data,
        syncedAt: online[name]!.syncedAt,
      });
    }
  });

  it('answers at once from IndexedDB after a restart, without waiting on a network that hangs', async () => {
    const online = await warm(lookup);
    await lookup.close();
    mock.inject('hang', { path: '/v2', times: Infinity });
    mock.resetRequests();
    // restarted later: every item is due for a refresh, and every refresh hangs (it never answers)
    const restarted = lookupWithEngine(
      mock,
      { indexedDB: lookup.idb, now: () => Date.now() + LATER },
      { dbName, products: [PRODUCT] },
    );
    try {
      for (const [name, open] of Object.entries(lookups(restarted))) {
        const first = (await next(open() as never)) as { data: unknown; syncedAt: number | null };
        expect({ name, data: first.data, syncedAt: first.syncedAt }).toEqual({ name, ...online[name] });
      }
      // the refreshes do go out, and none of them ever answers: the first answers did not wait for them
      await waitFor(() => expect(mock.requests.filter((r) => r.fault === 'hang').length).toBeGreaterThan(0));
      expect(mock.requests.filter((r) => r.status !== 0)).toEqual([]);
    } finally {
      await restarted.close();
      restarted.dispose();
    }
  });

  it('starts offline from IndexedDB when the API is down at start-up and a sync is due', async () => {
    const online = await warm(lookup);
    await lookup.close();
    await mock.close();
    // data older than the refresh interval: the new engine syncs at once, and learns that the API is gone
    const restarted = lookupWithEngine(
      mock,
      { indexedDB: lookup.idb, now: () => Date.now() + LATER },
      { dbName, products: [PRODUCT] },
    );
    try {
      const status = await next(restarted.status(), (s) => s.phase === 'offline' || s.phase === 'error');
      expect(status.online).toBe(false);
      for (const [name, open] of Object.entries(lookups(restarted))) {
        const r = (await next(open() as never)) as { data: unknown; offline: boolean; syncedAt: number | null };
        expect({ name, ...r }).toMatchObject({ name, offline: true, ...online[name] });
      }
    } finally {
      await restarted.close();
      restarted.dispose();
    }
  });
});
