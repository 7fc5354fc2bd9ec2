// The coupon listing's IndexedDB work driven step by step (begin, store pages, a read-through, commit or discard),
// for the interleavings a whole sync cannot be held at: between the last page stored and the commit, say.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  beginListing,
  commitListing,
  discardCouponListing,
  noteCouponRefresh,
  storePages,
  unlistedCoupons,
  type ListingOutcome,
  type PageToStore,
} from '../worker/sync/direct/couponListing';
import { metaKey, openStore, type ShopDatabase } from '../worker/store/store';
import { createReportDraft } from '../worker/sync/syncReport';

const row = (code: string, name = code) => ({ coupon_code: code, name, status: 'progress', apply_sale_price: 1000 });
type Row = ReturnType<typeof row>;

/**
 * Page `page` of a listing of `pages` pages, `perPage` rows each; its hash is its rows' text, as syncCoupons' stands
 * for them.
 */
function listed(page: number, rows: Row[], pages: number, perPage = rows.length): PageToStore {
  return {
    page,
    rows,
    rowsPath: 'data.list',
    codes: rows.map((r) => r.coupon_code),
    hash: JSON.stringify(rows),
    fetchedAt: 0,
    progress: { page, totalPages: pages, dataCount: pages * perPage, unkeyed: 0, listed: page * perPage },
  };
}

/** The commit of a listing none of whose unlisted coupons is confirmed gone, or these ones. */
const gone = (...codes: string[]): ListingOutcome => ({ gone: codes, kept: [], unreadable: [] });

describe('couponListing', () => {
  let db: ShopDatabase;
  const report = createReportDraft();
  beforeEach(() => {
    db = openStore(`listing-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange });
  });
  afterEach(() => db.close());

  /** A read-through of `code` at `at` that wrote `record` (or deleted the coupon), as readThrough.ts does it. */
  const readThrough = (code: string, at: number, record: Row | null) =>
    db.transaction('rw', [db.coupons, db.couponHashes, db.meta], async () => {
      const held = (await db.coupons.get(code)) !== undefined;
      if (record) await db.coupons.put(record as never);
      else await db.coupons.delete(code);
      await noteCouponRefresh(db, [code], at, { code, held });
    });
  const store = (listing: string, committed: string | null, pages: PageToStore[]) =>
    storePages(db, report, committed, listing, pages);
  const codes = async () => ((await db.coupons.toCollection().primaryKeys()) as string[]).sort();

  it('keeps every row of a first listing written from outside between its last page and its commit', async () => {
    const cp = await beginListing(db, 1000);
    expect(cp.state).toEqual({ name: 'lean' });
    await store(cp.listing, null, [listed(1, [row('A'), row('B')], 1)]);
    // the read-through lands after the last page and before the commit: the listing's own rows stay its own
    await readThrough('OUT', 2000, row('OUT'));
    expect(await unlistedCoupons(db, cp.listing, null)).toEqual([]);
    expect(await commitListing(db, cp.listing, gone())).toEqual({ written: 0, deleted: 0 });
    expect(await codes()).toEqual(['A', 'B', 'OUT']);
  });

  it('finds what a first listing into a table written from outside did not list, not what was read through', async () => {
    await db.coupons.put(row('STRAY') as never); // left by an earlier listing that never completed
    const cp = await beginListing(db, 1000);
    expect(cp.state).toEqual({ name: 'direct', hashesStale: false });
    await store(cp.listing, null, [listed(1, [row('A'), row('B')], 2, 2)]);
    await readThrough('OUT', 2000, row('OUT'));
    await store(cp.listing, null, [{ ...listed(2, [row('C'), row('D')], 2), fetchedAt: 3000 }]);
    expect(await unlistedCoupons(db, cp.listing, null)).toEqual(['STRAY']);
    expect(await commitListing(db, cp.listing, gone('STRAY'))).toEqual({ written: 0, deleted: 1 });
    expect(await codes()).toEqual(['A', 'B', 'C', 'D', 'OUT']);
  });

  it.each(['discarded', 'left to expire'])(
    'reads a page again after a read-through wrote one of its coupons during a re-sync that was %s',
    async (how) => {
      const page1 = listed(1, [row('A'), row('B')], 2);
      const page2 = listed(2, [row('C'), row('D')], 2);
      let cp = await beginListing(db, 1000);
      await store(cp.listing, null, [page1, page2]);
      await commitListing(db, cp.listing, gone());
      const committed = cp.listing;
      // a re-sync stores page 1 (as committed: skipped); the checkout reads C through, changed; the re-sync ends
      cp = await beginListing(db, 2000);
      expect(await store(cp.listing, committed, [page1])).toBe(0);
      await readThrough('C', 2500, row('C', '잠시 바뀐 이름'));
      if (how === 'discarded') await discardCouponListing(db);
      // page 2's rows hash as in the committed listing, but the local copy of C is not that one
      cp = await beginListing(db, 3000);
      expect(
        await store(cp.listing, committed, [
          { ...page1, fetchedAt: 3000 },
          { ...page2, fetchedAt: 3000 },
        ]),
      ).toBe(1);
      expect(await commitListing(db, cp.listing, gone())).toEqual({ written: 1, deleted: 0 });
      expect((await db.coupons.get('C'))?.name).toBe('C');
    },
  );

  it('refuses to store or commit pages of a listing whose checkpoint was removed meanwhile', async () => {
    const cp = await beginListing(db, 1000);
    await store(cp.listing, null, [listed(1, [row('A')], 2)]);
    await db.meta.delete(metaKey.couponSync);
    await expect(store(cp.listing, null, [listed(2, [row('B')], 2)])).rejects.toMatchObject({
      code: 'inconsistent_listing',
    });
    await expect(commitListing(db, cp.listing, gone())).rejects.toMatchObject({ code: 'inconsistent_listing' });
    expect(await db.meta.get(metaKey.coupons)).toBeUndefined(); // nothing confirmed
    expect(await codes()).toEqual(['A']);
  });
});
