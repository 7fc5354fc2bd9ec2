// The engine's fast paths must answer exactly as the slow ones they stand in for: the direct field readers as the
// zod schemas, and a re-sync that skips pages whose rows hash as before as one that reads every page.
import * as z from 'zod/mini';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockData, type MockShopApi } from '@shop-lookup/mock-server';
import type { IDBFactory } from 'fake-indexeddb';
import type { ShopLookup } from '../src';
import { readRecord, schemas, type RecordKind } from '@shop-lookup/shop-api';
import { listedPage, lookupFor, next, startMock, waitFor } from './utils';

/** The record as zod reads it, or null when zod rejects it. */
function zodRecord(kind: RecordKind, raw: Record<string, unknown>) {
  const r = z.safeParse(schemas[kind], raw);
  return r.success ? r.data : null;
}

describe('readRecord', () => {
  const data = createMockData({ seed: 11, coupons: 3000, issuedCoupons: 600, products: 200 });
  const samples: [RecordKind, Record<string, unknown>][] = [
    ...data.coupons.map((c): [RecordKind, Record<string, unknown>] => ['coupon', c]),
    ...data.issuedCoupons.map((c): [RecordKind, Record<string, unknown>] => ['issuedCoupon', c]),
    ...[...data.products.values()].flat().map((o): [RecordKind, Record<string, unknown>] => ['productOption', o]),
  ];

  it('makes of every generated record what the zod schema makes of it, fields in the same order', () => {
    for (const [kind, raw] of samples)
      expect(JSON.stringify(readRecord(kind, raw))).toBe(JSON.stringify(zodRecord(kind, raw)));
  });

  it.each([
    ['coupon', { coupon_code: '' }],
    ['coupon', { name: 'no code' }],
    ['coupon', { coupon_code: 'A', apply_sale_price: '12a' }],
    ['coupon', { coupon_code: 'A', use_app: 'maybe' }],
    ['coupon', { coupon_code: 'A', use_period: { from: 1 } }],
    ['productOption', { no: 'x', value_list: [] }],
    ['productOption', { no: 1, value_list: [{ name: 'no code' }] }],
  ] as [RecordKind, Record<string, unknown>][])(
    'leaves a %s that fails a field to zod, which rejects it: %j',
    (kind, raw) => {
      expect(readRecord(kind, raw)).toBeNull();
      expect(zodRecord(kind, raw)).toBeNull();
    },
  );
});

describe('re-sync of unchanged pages', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup & { idb: IDBFactory };
  let dbName: string;
  beforeEach(async () => {
    mock = await startMock(); // 240 coupons: pages of 100, 100, 40
    dbName = `resync-${Math.random()}`;
    lookup = lookupFor(mock, { dbName });
    await lookup.sync();
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  it('writes nothing and deletes nothing when nothing changed', async () => {
    expect(await lookup.sync()).toMatchObject({ ok: true, written: 0, deleted: 0, fetched: 240 });
  });

  it('reads a page again after a read-through wrote one of its coupons, even if its rows are back as before', async () => {
    const original = mock.data.coupons[150]!; // page 2
    const code = String(original.coupon_code);
    mock.upsertCoupon({ ...original, name: '잠시 바뀐 이름' });
    // online, the checkout asks the API even for a coupon it holds: the change lands locally (read-through)
    await lookup.validateCoupon(code, { amount: 1_000_000 });
    expect((await next(lookup.coupon(code), (r) => r.data?.name === '잠시 바뀐 이름')).data?.name).toBe(
      '잠시 바뀐 이름',
    );
    mock.upsertCoupon(original); // page 2 now hashes as in the last listing, but the local copy is not that one
    expect((await lookup.sync()).ok).toBe(true);
    expect((await next(lookup.coupon(code), (r) => r.data?.name === original.name)).data?.name).toBe(original.name);
  });

  it('notices a change on a page in the middle and deletes what the listing no longer names', async () => {
    const changed = mock.data.coupons[120]!;
    mock.upsertCoupon({ ...changed, name: '바뀐 이름' });
    expect(mock.removeCoupon(String(mock.data.coupons[230]!.coupon_code))).toBe(true);
    const report = await lookup.sync();
    expect(report).toMatchObject({ ok: true, written: 1, deleted: 1 });
    expect((await next(lookup.coupons(), (r) => r.data.length === 239)).data).toHaveLength(239);
  });

  it('deletes the coupons of a last page that is gone', async () => {
    for (const c of mock.data.coupons.slice(200)) mock.removeCoupon(String(c.coupon_code)); // page 3
    // 40 unlisted coupons: a second listing (of two unchanged pages) confirms them at less cost than 40 GETs
    expect(await lookup.sync()).toMatchObject({ ok: true, written: 0, deleted: 40, fetched: 400 });
    expect((await next(lookup.coupons(), (r) => r.data.length === 200)).data).toHaveLength(200);
  });

  it('refuses a re-sync whose page repeats the rows of an unchanged page before it, and deletes nothing', async () => {
    // a later page answers with the rows of the unchanged page before it (whose codes are in no index yet), in
    // every listing (one that does not add up is listed again)
    mock.inject('repeat-page', { path: '/v2/shop/coupons', times: Infinity });
    const report = await lookup.sync();
    expect(report.ok).toBe(false);
    // which page repeats which is named when the repeat is found within one write batch; pages are batched as they
    // arrive (worker/store/writeBehind.ts), so on a busy machine the repeat may be caught as "listed twice" instead
    expect(report.errors[0]).toMatchObject({
      code: 'inconsistent_listing',
      message: expect.stringMatching(/page \d repeats 100 coupon|a coupon was listed twice/),
    });
    expect((await next(lookup.coupons())).data).toHaveLength(240);
  });

  it('does not trust the page hashes of a listing during which a read-through wrote a coupon', async () => {
    const original = mock.data.coupons[10]!; // page 1
    const code = String(original.coupon_code);
    const page2 = mock.hold({ path: '/v2/shop/coupons', after: 1 });
    const running = lookup.sync();
    await page2.arrived;
    await waitFor(async () => expect(await listedPage(lookup.idb, dbName)).toBe(1)); // page 1 is stored, with the hash of its rows
    mock.upsertCoupon({ ...original, name: '동기화 중 바뀜' });
    await lookup.validateCoupon(code, { amount: 1_000_000 }); // read through: the change lands locally
    mock.upsertCoupon(original); // page 1 hashes as this listing stored it, but the local copy is not that one
    page2.release();
    // pages 2 and 3 are read in full (no hash trusted any more), and nothing the listing names is deleted
    expect(await running).toMatchObject({ ok: true, written: 0, deleted: 0 });
    expect((await next(lookup.coupons())).data).toHaveLength(240);
    expect((await next(lookup.coupon(code))).data?.name).toBe('동기화 중 바뀜');
    expect(await lookup.sync()).toMatchObject({ ok: true, written: 1 });
    expect((await next(lookup.coupon(code), (r) => r.data?.name === original.name)).data?.name).toBe(original.name);
  });
});

describe('a first sync into an empty database', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup;
  beforeEach(async () => {
    mock = await startMock(); // 240 coupons: pages of 100, 100, 40
    lookup = lookupFor(mock);
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });
  const LIST = '/v2/shop/coupons';

  it('refuses a listing whose pages repeat rows', async () => {
    mock.inject('repeat-page', { path: LIST, times: Infinity });
    const report = await lookup.sync();
    expect(report.ok).toBe(false);
    expect(report.errors[0]).toMatchObject({
      code: 'inconsistent_listing',
      message: expect.stringMatching(/page \d repeats/),
    });
  });

  it('keeps a coupon looked up meanwhile, and deletes nothing the listing names', async () => {
    const later = String(mock.data.coupons[220]!.coupon_code); // page 3
    const page2 = mock.hold({ path: LIST, after: 1 });
    const running = lookup.sync();
    await page2.arrived;
    // looked up before the listing reached it: read through, written from outside the listing
    expect((await next(lookup.coupon(later), (r) => r.data !== null)).data?.coupon_code).toBe(later);
    page2.release();
    expect(await running).toMatchObject({ ok: true, deleted: 0, written: 239 });
    expect((await next(lookup.coupons(), (r) => r.data.length === 240)).data).toHaveLength(240);
  });

  it('keeps a coupon read through during the listing that its older pages do not name, and deletes it on the next sync', async () => {
    const page2 = mock.hold({ path: LIST, after: 1 }); // page 2 was requested before the read-through below
    const running = lookup.sync();
    await page2.arrived;
    mock.upsertCoupon({ coupon_code: 'GONE-SOON', name: '잠깐', status: 'progress', apply_sale_price: 100 });
    expect((await next(lookup.coupon('GONE-SOON'), (r) => r.data !== null)).data?.name).toBe('잠깐');
    mock.removeCoupon('GONE-SOON');
    page2.release();
    // the read-through is newer than every page requested before it: its copy stays until a listing says otherwise
    expect(await running).toMatchObject({ ok: true, deleted: 0 });
    expect((await next(lookup.coupon('GONE-SOON'))).data?.name).toBe('잠깐');
    expect(await lookup.sync()).toMatchObject({ ok: true, deleted: 1 });
    expect((await next(lookup.coupon('GONE-SOON'))).data).toBeNull();
  });

  it('stores the page-mates of a rejected record and finishes the listing', async () => {
    mock.inject('malformed-record', { path: LIST, after: 1 });
    const report = await lookup.sync();
    expect(report).toMatchObject({ ok: true, rejected: 1, written: 239 });
    expect((await next(lookup.coupons(), (r) => r.data.length === 239)).data).toHaveLength(239);
  });
});
