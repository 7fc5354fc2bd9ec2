// Full coupon sync: every page of GET /v2/shop/coupons.
//
// Readers always see a complete snapshot. On a re-sync, changed records wait in `couponStage` and are applied,
// with deletions, in one transaction once the whole listing has arrived and adds up; until then lookups answer
// from the last complete snapshot. Only the first sync (no complete snapshot exists yet, nothing to protect)
// writes pages straight into `coupons`, so a new till can answer before a long first sync ends.
//
// A checkpoint after every page lets an interrupted listing resume at the next page, unless the upstream
// listing changed meanwhile (its count or page total moved), in which case it starts over.
import { ShopLookupError } from '../src/errors';
import type { Coupon } from '../src/types';
import type { Collection } from 'dexie';
import type { CheckedPage } from './apiClient';
import { rejectionError } from './parseRecords';
import { sameRecord } from './sameRecord';
import { confirm, metaKey, type CouponCheckpoint, type ShopDatabase } from './store';
import type { SyncContext } from './syncContext';

/** A checkpoint older than this is not resumed: too much may have changed. */
const CHECKPOINT_MAX_AGE_MS = 6 * 60 * 60 * 1000;
/** Listing changed under us this many times in one sync: give up for now, keep the last snapshot. */
const MAX_RESTARTS = 2;
/** Rows moved per transaction step when applying a staged snapshot. */
const APPLY_CHUNK = 2000;

function inconsistent(what: string): ShopLookupError {
  return new ShopLookupError(
    'inconsistent_listing',
    `The coupon listing did not add up: ${what}. Nothing was deleted and the last complete data is kept; the listing is fetched again on the next sync.`,
  );
}

async function begin(db: ShopDatabase, at: number): Promise<CouponCheckpoint> {
  const hasSnapshot = (await db.meta.get(metaKey.coupons)) !== undefined;
  const cp: CouponCheckpoint = {
    key: metaKey.couponSync,
    startedAt: at,
    mode: hasSnapshot ? 'staged' : 'direct',
    page: 0,
    totalPages: null,
    dataCount: null,
    unkeyed: 0,
  };
  await db.transaction('rw', [db.couponStage, db.couponPages, db.meta], async () => {
    await db.couponStage.clear();
    await db.couponPages.clear();
    await db.meta.put(cp);
  });
  return cp;
}

/** Forgets an unfinished listing: its staged changes never reach readers. */
export async function discardCouponListing(db: ShopDatabase): Promise<void> {
  await db.transaction('rw', [db.couponStage, db.couponPages, db.meta], async () => {
    await db.couponStage.clear();
    await db.couponPages.clear();
    await db.meta.delete(metaKey.couponSync);
  });
}

async function resume(db: ShopDatabase, now: number): Promise<{ cp: CouponCheckpoint; seen: Set<string> } | null> {
  const cp = (await db.meta.get(metaKey.couponSync)) as CouponCheckpoint | undefined;
  if (!cp || now - cp.startedAt > CHECKPOINT_MAX_AGE_MS || cp.page === 0) return null;
  const seen = new Set<string>();
  await db.couponPages.each((p) => p.codes.forEach((c) => seen.add(c)));
  return { cp, seen };
}

/** Stores one page: the changed records (into the stage or straight into coupons), its codes, the checkpoint. */
async function storePage(db: ShopDatabase, cp: CouponCheckpoint, page: number, records: Coupon[], codes: string[]) {
  const target = cp.mode === 'direct' ? db.coupons : db.couponStage;
  return db.transaction('rw', [db.coupons, db.couponStage, db.couponPages, db.meta], async () => {
    const current = await db.coupons.bulkGet(records.map((r) => r.coupon_code));
    const changed = records.filter((r, i) => !sameRecord(current[i], r));
    if (changed.length > 0) await target.bulkPut(changed);
    await db.couponPages.put({ page, codes });
    await db.meta.put({ ...cp, page });
    return changed.length;
  });
}

/** Applies a complete listing in one transaction: staged changes in, unlisted coupons out, confirmation. */
async function commit(db: ShopDatabase, cp: CouponCheckpoint, seen: Set<string>, mayDelete: boolean) {
  return db.transaction('rw', [db.coupons, db.couponStage, db.couponPages, db.meta], async () => {
    let written = 0;
    let deleted = 0;
    for (let last: string | null = null; ; ) {
      const from: Collection<Coupon, string> = last === null ? db.couponStage.toCollection() : db.couponStage.where(':id').above(last);
      const chunk: Coupon[] = await from.limit(APPLY_CHUNK).toArray();
      if (chunk.length === 0) break;
      await db.coupons.bulkPut(chunk);
      written += chunk.length;
      last = chunk[chunk.length - 1]!.coupon_code;
    }
    if (mayDelete) {
      for (let last: string | null = null; ; ) {
        const from: Collection<Coupon, string> = last === null ? db.coupons.toCollection() : db.coupons.where(':id').above(last);
        const keys = (await from.limit(APPLY_CHUNK).primaryKeys()) as string[];
        if (keys.length === 0) break;
        const gone = keys.filter((k) => !seen.has(k));
        if (gone.length > 0) await db.coupons.bulkDelete(gone);
        deleted += gone.length;
        last = keys[keys.length - 1]!;
      }
    }
    await db.couponStage.clear();
    await db.couponPages.clear();
    await db.meta.delete(metaKey.couponSync);
    // confirmed as of when the listing started: every record is at least that fresh
    await confirm(db, [metaKey.coupons], cp.startedAt);
    return { written, deleted };
  });
}

function changedUnder(cp: CouponCheckpoint, p: CheckedPage<Coupon>): boolean {
  return (
    (cp.dataCount !== null && p.dataCount !== null && p.dataCount !== cp.dataCount) ||
    (cp.totalPages !== null && p.totalPages !== null && p.totalPages !== cp.totalPages)
  );
}

/**
 * Syncs all coupons. Throws (after recording what it learned) when the listing could not be completed;
 * the last complete snapshot then stays as it was.
 * @example await syncCoupons(ctx); // ctx.report now says what was fetched, written, deleted, rejected
 */
export async function syncCoupons(ctx: SyncContext): Promise<void> {
  const { db, client, report } = ctx;
  const resumed = await resume(db, ctx.now());
  let cp = resumed?.cp ?? (await begin(db, ctx.now()));
  const seen = resumed?.seen ?? new Set<string>();
  let restarts = 0;
  let lastRows = 0;

  for (let page = cp.page + 1; ; page++) {
    const p = await ctx.call(() => client.listCoupons(page, { priority: ctx.priority, signal: ctx.signal, counter: report }));
    report.fetched += p.rowCount;
    if (changedUnder(cp, p)) {
      if (++restarts > MAX_RESTARTS) throw inconsistent('it kept changing while it was being read');
      cp = await begin(db, ctx.now());
      seen.clear();
      page = 0;
      continue;
    }
    const codes: string[] = [];
    let unkeyed = cp.unkeyed;
    for (const r of p.records) codes.push(r.coupon_code);
    for (const r of p.rejected) {
      report.rejected++;
      report.errors.push(rejectionError(`GET /v2/shop/coupons page ${page}`, r));
      // a rejected record whose code could not be read might be any local coupon: then nothing may be deleted
      if (r.key === null) unkeyed++;
      else codes.push(String(r.key));
    }
    const repeated = codes.filter((c, i) => seen.has(c) || codes.indexOf(c) !== i);
    if (repeated.length > 0) {
      await discardCouponListing(db);
      throw inconsistent(`page ${page} repeats ${repeated.length} coupon(s) of earlier rows (e.g. ${JSON.stringify(repeated[0])})`);
    }
    for (const c of codes) seen.add(c);
    cp = { ...cp, page, totalPages: p.totalPages, dataCount: p.dataCount, unkeyed };
    const written = await storePage(db, cp, page, p.records, codes);
    if (cp.mode === 'direct') report.written += written;
    ctx.progress?.('coupons', seen.size, p.dataCount);
    lastRows = p.rowCount;
    const last = p.totalPages !== null ? page >= p.totalPages : p.rowsPath === 'data' || p.rowCount === 0;
    if (last) break;
  }

  if (cp.dataCount !== null && seen.size + cp.unkeyed !== cp.dataCount) {
    await discardCouponListing(db);
    throw inconsistent(`${seen.size + cp.unkeyed} coupons were listed but the API counted ${cp.dataCount} (rows skipped or shifted between pages; last page had ${lastRows})`);
  }
  const blind = cp.unkeyed > 0;
  const { written, deleted } = await commit(db, cp, seen, !blind);
  if (cp.mode === 'staged') report.written += written;
  report.deleted += deleted;
  if (blind) {
    report.errors.push({
      code: 'deletions_skipped',
      message: 'A coupon without a readable code was rejected, so no local coupon was deleted in this sync (it might have been that one).',
    });
  }
}
