// The coupon listing's bookkeeping in IndexedDB: where it stands (the checkpoint), the codes of each page listed
// so far (`listedPages`, under a unique index: a code listed twice cannot be stored), the raw-row hash of each
// page (`couponHashes`), and applying a complete listing. Nothing here grows with the listing in memory.
import { ShopLookupError } from '../../../src/protocol';
import type { Coupon } from '../../../src/protocol';
import Dexie, { type Collection } from 'dexie';
import { parseRecords, rejectionError } from '../../records/parseRecords';
import { sameRecord } from '../../records/sameRecord';
import { confirm, metaKey, type CouponCheckpoint, type ShopDatabase, type StagedCoupon } from '../../store/store';
import type { SyncContext } from '../syncContext';

/** A checkpoint older than this is not resumed: too much may have changed. */
const CHECKPOINT_MAX_AGE_MS = 6 * 60 * 60 * 1000;
/** Rows moved per transaction step when applying a listing. */
const APPLY_CHUNK = 2000;

/** A listed page on its way to IndexedDB. */
export interface PageToStore {
  page: number;
  rows: unknown[];
  rowsPath: string;
  codes: string[];
  /** Hash of the rows as they arrived (syncCoupons' rowsHash). */
  hash: string;
  /** When the request that brought this page went out (ctx.now()). */
  fetchedAt: number;
  /** The checkpoint once this page is stored. */
  cp: CouponCheckpoint;
}

/** What storing a listing's pages has found so far. */
export interface ListingState {
  /** The committed listing whose page hashes count (read once: only a commit changes it). */
  committed: string | null;
  /** Pages whose rows were not those of the committed listing (validated and diffed). */
  unmatched: number;
}

export function inconsistent(what: string): ShopLookupError {
  return new ShopLookupError(
    'inconsistent_listing',
    `The coupon listing did not add up: ${what}. Nothing was deleted and the last complete data is kept; the listing is fetched again on the next sync.`,
  );
}

const newListingId = (at: number) => `${at.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

/** Starts a listing: staged in `couponStage`, or straight into an empty `coupons` when no snapshot exists yet. */
export async function beginListing(db: ShopDatabase, at: number): Promise<CouponCheckpoint> {
  return db.transaction('rw', [db.coupons, db.couponStage, db.listedPages, db.meta], async () => {
    const hasSnapshot = (await db.meta.get(metaKey.coupons)) !== undefined;
    const cp: CouponCheckpoint = {
      key: metaKey.couponSync,
      startedAt: at,
      mode: hasSnapshot ? 'staged' : 'direct',
      page: 0,
      totalPages: null,
      dataCount: null,
      unkeyed: 0,
      listed: 0,
      unmatched: 0,
      listing: newListingId(at),
      // an empty table has nothing to diff a first listing against (until someone else writes: noteCouponRefresh)
      pristine: !hasSnapshot && (await db.coupons.count()) === 0,
    };
    cp.lean = cp.pristine;
    await db.couponStage.clear();
    await db.listedPages.clear();
    await db.meta.put(cp);
    return cp;
  });
}

/** The listing an earlier sync left unfinished, if it may be resumed. */
export async function resumeListing(db: ShopDatabase, now: number): Promise<CouponCheckpoint | null> {
  const cp = (await db.meta.get(metaKey.couponSync)) as CouponCheckpoint | undefined;
  if (!cp || now - cp.startedAt > CHECKPOINT_MAX_AGE_MS || cp.page === 0 || cp.listing === undefined) return null;
  return cp;
}

/** Forgets an unfinished listing: its staged changes never reach readers. */
export async function discardCouponListing(db: ShopDatabase): Promise<void> {
  await db.transaction('rw', [db.couponStage, db.listedPages, db.meta], async () => {
    await db.couponStage.clear();
    await db.listedPages.clear();
    await db.meta.delete(metaKey.couponSync);
  });
}

/**
 * Call inside every transaction of a read-through of coupon `codes` (asked at `at`): during a listing, the copies
 * it lists from earlier requests are older than what the read-through stored (see `reread`). With `wrote`, the
 * read-through wrote `code` in `coupons`, saying whether coupons held it before: the stored page hashes no longer
 * describe the table, and a first listing's table is no longer known to hold only its own rows.
 */
export async function noteCouponRefresh(
  db: ShopDatabase,
  codes: string[],
  at: number,
  wrote?: { code: string; held: boolean },
): Promise<void> {
  const cp = (await db.meta.get(metaKey.couponSync)) as CouponCheckpoint | undefined;
  if (!cp) {
    if (wrote) await db.couponHashes.clear();
    return;
  }
  const reread = { ...cp.reread };
  for (const code of codes) reread[code] = Math.max(at, reread[code] ?? at);
  cp.reread = reread;
  if (wrote) {
    // A listing is under way: from now on no page hash is trusted (its rows stay: they hold this listing's codes,
    // see fillListedPages), and the ones this listing stores are dropped when it commits.
    cp.pristine = false;
    cp.hashesStale = true;
    // a lean listing's rows are the codes it listed: remember what is not one of them
    if (cp.lean && !wrote.held) cp.outside = [...(cp.outside ?? []), wrote.code];
  }
  await db.meta.put(cp);
}

/** Whether a listed copy of `code` fetched at `fetchedAt` is older than a read-through's during this listing. */
function rereadSince(cp: CouponCheckpoint | undefined, code: string, fetchedAt: number): boolean {
  const at = cp?.reread?.[code];
  return at !== undefined && at >= fetchedAt;
}

/**
 * Puts the codes of this listing's pages stored so far into listedPages, from their rows in couponHashes. While
 * every page is the committed listing's own, listedPages is left empty (a re-sync that finds nothing changed
 * writes no index of 100,000 codes); the first page that differs, or a commit that must delete, fills it first.
 */
async function fillListedPages(db: ShopDatabase, listing: string, refused: (error: DOMException | null) => void) {
  const rows = await db.couponHashes.filter((h) => h.listing === listing && h.codes !== undefined).toArray();
  putDirect(db.listedPages, rows.map((h) => ({ page: h.page, codes: h.codes! })), refused);
}

/**
 * Ends a lean listing: listedPages gets the codes it listed so far (every row of coupons but the ones written from
 * outside), chunk by chunk under page numbers below 1, and pages are kept there from now on.
 */
async function endLean(db: ShopDatabase, outside: string[], refused: (error: DOMException | null) => void): Promise<void> {
  const notListed = new Set(outside);
  for (let last: string | null = null, n = 0; ; ) {
    const from: Collection<Coupon, string> = last === null ? db.coupons.toCollection() : db.coupons.where(':id').above(last);
    const keys = (await from.limit(APPLY_CHUNK).primaryKeys()) as string[];
    if (keys.length === 0) break;
    putDirect(db.listedPages, [{ page: -n++, codes: keys.filter((k) => !notListed.has(k)) }], refused);
    last = keys[keys.length - 1]!;
  }
}

/** A code added twice to a lean listing's coupons (a BulkError of ConstraintErrors), in words; else null. */
function leanRepeat(error: unknown, records: Coupon[], pageOf: number[]): ShopLookupError | null {
  const byPos = (error as { failuresByPos?: Record<number, { name?: string }> } | null)?.failuresByPos;
  const pos = Object.entries(byPos ?? {}).find(([, e]) => e?.name === 'ConstraintError')?.[0];
  if (pos === undefined) return null;
  const i = Number(pos);
  return inconsistent(`page ${pageOf[i]} repeats a coupon of earlier rows (e.g. ${JSON.stringify(records[i]!.coupon_code)})`);
}

/** Which page of `batch` lists a code of an earlier page, in words (after the index refused one). */
async function repeatError(db: ShopDatabase, batch: PageToStore[]): Promise<ShopLookupError> {
  const seen = new Map<string, number>();
  for (const b of batch) {
    // against the pages stored before this batch, then against the pages before it in the batch
    const earlier = await db.listedPages.where('codes').anyOf(b.codes).toArray();
    const mine = new Set(b.codes);
    const repeated = earlier.flatMap((o) => o.codes.filter((c) => mine.has(c)));
    for (const c of b.codes) if (seen.has(c)) repeated.push(c);
    if (repeated.length > 0) {
      return inconsistent(`page ${b.page} repeats ${repeated.length} coupon(s) of earlier rows (e.g. ${JSON.stringify(repeated[0])})`);
    }
    for (const c of b.codes) seen.set(c, b.page);
  }
  return inconsistent('a coupon was listed twice');
}

/**
 * Puts rows with IndexedDB itself, in the running Dexie transaction: bookkeeping that no lookup reads, so without
 * the per-key change tracking Dexie does for its own writes (a tenth of a re-sync's time went there). Not
 * awaited: the transaction commits once they are done, and a failure aborts it; `refused` is told why (Dexie
 * sees the transaction fail before its error is set).
 */
function putDirect(table: { name: string }, rows: unknown[], refused: (error: DOMException | null) => void): void {
  const store = Dexie.currentTransaction.idbtrans.objectStore(table.name);
  for (const row of rows) {
    const req = store.put(row);
    req.onerror = () => refused(req.error);
  }
}

/**
 * Stores listed pages in one transaction: the records that changed (into the stage, or straight into coupons),
 * each page's codes and hash, the checkpoint. Pages whose hash is that of the committed listing are skipped whole.
 * Returns how many records it wrote.
 */
export async function storePages(ctx: SyncContext, state: ListingState, batch: PageToStore[]): Promise<number> {
  const { db, report } = ctx;
  const last = batch[batch.length - 1]!.cp;
  const direct = last.mode === 'direct';
  let unmatched = state.unmatched;
  let refused: DOMException | null = null;
  const onRefused = (error: DOMException | null) => (refused ??= error);
  const store = () =>
    db.transaction('rw', [db.coupons, db.couponStage, db.listedPages, db.couponHashes, db.meta], async () => {
      // read in the transaction, so that a read-through write between two pages (noteCouponRefresh) is seen
      // (no committed listing, as in a first sync: no hash can match, none to read)
      const [stored, current] = await Promise.all([
        state.committed === null ? [] : db.couponHashes.bulkGet(batch.map((b) => b.page)),
        db.meta.get(metaKey.couponSync) as Promise<CouponCheckpoint | undefined>,
      ]);
      const pristine = direct && current?.pristine === true;
      let lean = current?.lean === true;
      let rejections = false;
      const hashes: (string | null)[] = [];
      const records: Coupon[] = [];
      const pageOf: number[] = [];
      const fetchedAt: number[] = [];
      batch.forEach((b, i) => {
        const known = stored[i];
        if (known?.hash === b.hash && known.listing === state.committed && current?.hashesStale !== true) {
          hashes.push(b.hash);
          return;
        }
        unmatched++;
        const parsed = parseRecords('coupon', b.rows, b.rowsPath);
        for (const r of parsed.rejected) {
          report.rejected++;
          report.errors.push(rejectionError(`GET /v2/shop/coupons page ${b.page}`, r));
        }
        for (const r of parsed.records) {
          // a read-through asked the API for this coupon after this page was requested: its copy is the newer
          if (rereadSince(current, r.coupon_code, b.fetchedAt)) continue;
          records.push(r);
          pageOf.push(b.page);
          fetchedAt.push(b.fetchedAt);
        }
        rejections ||= parsed.rejected.length > 0;
        hashes.push(parsed.rejected.length === 0 ? b.hash : null);
      });
      if (lean && (!pristine || rejections)) {
        await endLean(db, current?.outside ?? [], onRefused);
        lean = false;
      }
      let changed = records;
      if (lean) {
        // every row of coupons is this listing's: adding fails for a code an earlier row already listed
        if (records.length > 0) {
          await db.coupons.bulkAdd(records).catch((error: unknown) => {
            throw leanRepeat(error, records, pageOf) ?? error;
          });
        }
      } else {
        let when = fetchedAt;
        if (!pristine && records.length > 0) {
          const existing = await db.coupons.bulkGet(records.map((r) => r.coupon_code));
          const keep = records.map((r, i) => !sameRecord(existing[i], r));
          changed = records.filter((_, i) => keep[i]);
          when = fetchedAt.filter((_, i) => keep[i]);
        }
        if (changed.length > 0 && direct) await db.coupons.bulkPut(changed);
        // staged copies keep when they were fetched: a read-through after that wins at commit
        else if (changed.length > 0) await db.couponStage.bulkPut(changed.map((r, i): StagedCoupon => ({ ...r, '@fetchedAt': when[i]! })));
        if (unmatched > 0) {
          if (state.unmatched === 0) await fillListedPages(db, last.listing!, onRefused);
          // the unique index over all listed codes refuses a code an earlier row already listed
          putDirect(db.listedPages, batch.map((b) => ({ page: b.page, codes: b.codes })), onRefused);
        }
      }
      await db.meta.put({ ...last, pristine, unmatched, lean, outside: current?.outside, hashesStale: current?.hashesStale, reread: current?.reread });
      const pageHashes = batch.map((b, i) => ({ page: b.page, hash: hashes[i] ?? null, listing: last.listing!, codes: b.codes }));
      putDirect(db.couponHashes, pageHashes, onRefused);
      return changed.length;
    });
  try {
    const written = await store();
    state.unmatched = unmatched;
    return written;
  } catch (error) {
    // the unique index refused a code: say which page repeats which code
    if ((refused as DOMException | null)?.name === 'ConstraintError') throw await repeatError(db, batch);
    throw error ?? refused;
  }
}

/** Deletes the coupons no page of this listing named; chunk by chunk, against the index of listed codes. */
async function deleteUnlisted(db: ShopDatabase, reread: Record<string, number>): Promise<number> {
  let deleted = 0;
  for (let last: string | null = null; ; ) {
    const from: Collection<Coupon, string> = last === null ? db.coupons.toCollection() : db.coupons.where(':id').above(last);
    const keys = (await from.limit(APPLY_CHUNK).primaryKeys()) as string[];
    if (keys.length === 0) break;
    const listed = new Set((await db.listedPages.where('codes').between(keys[0]!, keys[keys.length - 1]!, true, true).keys()) as string[]);
    // a coupon the API confirmed one by one during the listing may have been created after its page was listed
    const gone = keys.filter((k) => !listed.has(k) && reread[k] === undefined);
    if (gone.length > 0) await db.coupons.bulkDelete(gone);
    deleted += gone.length;
    last = keys[keys.length - 1]!;
  }
  return deleted;
}

/**
 * Applies a complete listing in one transaction: staged changes in, unlisted coupons out, confirmation.
 * @param mayDelete false when a row without a readable code was rejected (it might be any local coupon)
 */
export async function commitListing(db: ShopDatabase, cp: CouponCheckpoint, state: ListingState, mayDelete: boolean) {
  const tables = [db.coupons, db.couponStage, db.listedPages, db.couponHashes, db.meta];
  return db.transaction('rw', tables, async () => {
    const current = (await db.meta.get(metaKey.couponSync)) as CouponCheckpoint | undefined;
    let written = 0;
    for (let last: string | null = null; ; ) {
      const from: Collection<StagedCoupon, string> = last === null ? db.couponStage.toCollection() : db.couponStage.where(':id').above(last);
      const chunk = await from.limit(APPLY_CHUNK).toArray();
      if (chunk.length === 0) break;
      // never replace what a read-through stored after this copy was fetched (rows of older builds: the start)
      const newer = chunk.filter((r) => !rereadSince(current, r.coupon_code, r['@fetchedAt'] ?? cp.startedAt));
      await db.coupons.bulkPut(newer.map(({ '@fetchedAt': _at, ...coupon }) => coupon));
      written += newer.length;
      last = chunk[chunk.length - 1]!.coupon_code;
    }
    // Nothing can be gone when coupons holds only this listing's rows (a first listing into an empty table that
    // nobody else wrote), or when every page was the committed listing's own and that listing had no more pages
    // (a read-through write would have dropped the hashes).
    const onlyOurs = cp.mode === 'direct' && current?.pristine === true;
    const sameListing =
      state.committed !== null &&
      state.unmatched === 0 &&
      !(await db.couponHashes.where(':id').above(cp.page).filter((h) => h.listing === state.committed).first());
    let deleted = 0;
    if (mayDelete && !onlyOurs && !sameListing) {
      // (every page matched, yet the committed listing was longer: not expected, as a page's hash covers the
      // paging; the index is filled rather than delete what it would miss)
      if (state.unmatched === 0) await fillListedPages(db, cp.listing!, () => undefined);
      deleted = await deleteUnlisted(db, current?.reread ?? {});
    }
    await db.couponStage.clear();
    await db.listedPages.clear();
    await db.meta.delete(metaKey.couponSync);
    // this listing's page hashes now describe what coupons holds (unless written meanwhile: then none is trusted);
    // pages beyond its end belong to none
    if (current?.hashesStale) await db.couponHashes.clear();
    else await db.couponHashes.where(':id').above(cp.page).delete();
    await db.meta.put({ key: metaKey.couponListing, listing: cp.listing! });
    // confirmed as of when the listing started: every record is at least that fresh
    await confirm(db, [metaKey.coupons], cp.startedAt);
    return { written, deleted };
  });
}
