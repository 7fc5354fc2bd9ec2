// The coupon listing's bookkeeping in IndexedDB: the work each state of its checkpoint (listingCheckpoint.ts) calls
// for. The codes of each page listed so far (`listedPages`, under a unique index: a code listed twice cannot be
// stored), the raw-row hash of each page (`couponHashes`), the stored coupons a complete listing did not name,
// and applying a complete listing (deleting only the ones confirmed gone). Nothing here grows with the listing in
// memory but the codes it did not name.
import { ShopLookupError } from '../../../src/protocol';
import type { Coupon } from '../../../src/protocol';
import Dexie, { type Collection } from 'dexie';
import { parseRecords, RECORD_READERS_VERSION, rejectionError, sameRecord } from '@shop-lookup/shop-api';
import {
  confirm,
  metaKey,
  type PageHash,
  type ShopDatabase,
  type StagedCoupon,
  type UnlistedSuspects,
} from '../../store/store';
import { clearMarks, markUnreadable, unreadableMarks, type UnreadableRecord } from '../../store/unreadableMarks';
import type { ReportDraft } from '../syncReport';
import {
  diffs,
  hashesStale,
  listedCodesIn,
  mayFindUnlisted,
  nextCheckpoint,
  outsideCodes,
  readCheckpoint,
  trustsHashes,
  writesInto,
  type CouponCheckpoint,
  type ListingProgress,
} from './listingCheckpoint';

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
  /** How far the listing got once this page is stored. */
  progress: ListingProgress;
}

export function inconsistent(what: string): ShopLookupError {
  return new ShopLookupError(
    'inconsistent_listing',
    `The coupon listing did not add up: ${what}. Nothing was deleted and the last complete data is kept; the listing is fetched again on the next sync.`,
  );
}

const newListingId = (at: number) => `${at.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

/** The checkpoint of `listing` as stored now (in the running transaction); refused if the listing was dropped. */
async function storedCheckpoint(db: ShopDatabase, listing: string): Promise<CouponCheckpoint> {
  const cp = readCheckpoint(await db.meta.get(metaKey.couponSync));
  if (cp?.listing !== listing) throw inconsistent('its checkpoint was removed while it was being stored');
  return cp;
}

/**
 * Starts a listing: staged in `couponStage`, or straight into an empty `coupons` when no snapshot exists yet.
 * A listing left behind whose page hashes went stale (or one of an earlier build) takes them along.
 */
export async function beginListing(db: ShopDatabase, at: number): Promise<CouponCheckpoint> {
  return db.transaction('rw', [db.coupons, db.couponStage, db.listedPages, db.couponHashes, db.meta], async () => {
    const [snapshot, left] = await db.meta.bulkGet([metaKey.coupons, metaKey.couponSync]);
    // an empty table has nothing to diff a first listing against (until someone else writes: noteCouponRefresh)
    const emptyTable = snapshot === undefined && (await db.coupons.count()) === 0;
    const cp = nextCheckpoint(null, {
      type: 'begin',
      listing: newListingId(at),
      at,
      snapshot: snapshot !== undefined,
      emptyTable,
    })!;
    if (left !== undefined) await forgetHashesIfStale(db, left);
    await db.couponStage.clear();
    await db.listedPages.clear();
    await db.meta.put(cp);
    return cp;
  });
}

/** The listing an earlier sync left unfinished, if it may be resumed (see readCheckpoint and CHECKPOINT_MAX_AGE_MS). */
export async function resumeListing(db: ShopDatabase, now: number): Promise<CouponCheckpoint | null> {
  return nextCheckpoint(readCheckpoint(await db.meta.get(metaKey.couponSync)), { type: 'resume', now });
}

/**
 * A read-through wrote coupons during a listing that ends without a commit: the committed listing's page hashes no
 * longer describe the table. (A checkpoint that cannot be read, of an earlier build, may have been so.)
 */
async function forgetHashesIfStale(db: ShopDatabase, row: unknown): Promise<void> {
  const cp = readCheckpoint(row);
  if (!cp || hashesStale(cp.state)) await db.couponHashes.clear();
}

/** Forgets an unfinished listing: its staged changes never reach readers. */
export async function discardCouponListing(db: ShopDatabase): Promise<void> {
  await db.transaction('rw', [db.couponStage, db.listedPages, db.couponHashes, db.meta], async () => {
    const left = await db.meta.get(metaKey.couponSync);
    if (left !== undefined) await forgetHashesIfStale(db, left);
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
  const cp = readCheckpoint(await db.meta.get(metaKey.couponSync));
  if (!cp) {
    // no listing under way (or one of an earlier build, which starts over): no page hash describes the table now
    if (wrote) await db.couponHashes.clear();
    return;
  }
  // (a listing under way keeps the hashes: its own rows hold its codes, see fillListedPages; its state says stale)
  const next = nextCheckpoint(cp, { type: 'readThrough', codes, at, wrote });
  if (next !== cp) await db.meta.put(next!);
}

/** Whether a listed copy of `code` fetched at `fetchedAt` is older than a read-through's during this listing. */
function rereadSince(cp: CouponCheckpoint, code: string, fetchedAt: number): boolean {
  const at = cp.reread[code];
  return at !== undefined && at >= fetchedAt;
}

/**
 * Puts the codes of this listing's pages stored so far into listedPages, from their rows in couponHashes. While
 * every page is the committed listing's own, listedPages is left empty (a re-sync that finds nothing changed
 * writes no index of 100,000 codes); the first page that differs, or a commit that must delete, fills it first.
 */
async function fillListedPages(db: ShopDatabase, listing: string, refused: (error: DOMException | null) => void) {
  const rows = await db.couponHashes.filter((h) => h.listing === listing && h.codes !== undefined).toArray();
  const codesOf = (codes: string | string[]) => (typeof codes === 'string' ? (JSON.parse(codes) as string[]) : codes);
  putDirect(
    db.listedPages,
    rows.map((h) => ({ page: h.page, codes: codesOf(h.codes!) })),
    refused,
  );
}

/**
 * Ends a lean listing: listedPages gets the codes it listed so far (every row of coupons but the ones written from
 * outside), chunk by chunk under page numbers below 1, and pages are kept there from now on.
 */
async function endLean(
  db: ShopDatabase,
  outside: string[],
  refused: (error: DOMException | null) => void,
): Promise<void> {
  const notListed = new Set(outside);
  for (let last: string | null = null, n = 0; ; ) {
    const from: Collection<Coupon, string> =
      last === null ? db.coupons.toCollection() : db.coupons.where(':id').above(last);
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
  return inconsistent(
    `page ${pageOf[i]} repeats a coupon of earlier rows (e.g. ${JSON.stringify(records[i]!.coupon_code)})`,
  );
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
      return inconsistent(
        `page ${b.page} repeats ${repeated.length} coupon(s) of earlier rows (e.g. ${JSON.stringify(repeated[0])})`,
      );
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
 * Stores listed pages of `listing` in one transaction: the records that changed (into the stage, or straight into
 * coupons, as its state says), each page's codes and hash, the checkpoint. Pages whose hash is that of the
 * `committed` listing, read by today's readers, are skipped whole. Returns how many records it wrote.
 */
export async function storePages(
  db: ShopDatabase,
  report: ReportDraft,
  committed: string | null,
  listing: string,
  batch: PageToStore[],
): Promise<number> {
  let refused: DOMException | null = null;
  const onRefused = (error: DOMException | null) => (refused ??= error);
  const store = () =>
    db.transaction('rw', [db.coupons, db.couponStage, db.listedPages, db.couponHashes, db.meta], async () => {
      // read in the transaction, so that a read-through write between two pages (noteCouponRefresh) is seen
      // (no committed listing, as in a first sync: no hash can match, none to read)
      const [known, cp] = await Promise.all([
        committed === null ? [] : db.couponHashes.bulkGet(batch.map((b) => b.page)),
        storedCheckpoint(db, listing),
      ]);
      const trusted = committed !== null && trustsHashes(cp.state);
      let unmatched = false;
      let rejected = false;
      const hashes: (string | null)[] = [];
      const records: Coupon[] = [];
      const pageOf: number[] = [];
      const fetchedAt: number[] = [];
      const unreadable: UnreadableRecord[] = [];
      batch.forEach((b, i) => {
        const k = known[i];
        if (trusted && k?.hash === b.hash && k.listing === committed && k.readers === RECORD_READERS_VERSION) {
          hashes.push(b.hash);
          return;
        }
        unmatched = true;
        const parsed = parseRecords('coupon', b.rows, b.rowsPath);
        for (const r of parsed.rejected) {
          report.rejected++;
          const error = rejectionError(`GET /v2/shop/coupons page ${b.page}`, r);
          report.errors.push(error);
          // the copy kept is no longer confirmed by anything (unless a read-through since brought a newer one)
          if (r.key !== null && !rereadSince(cp, String(r.key), b.fetchedAt))
            unreadable.push({ code: String(r.key), message: error.message });
        }
        for (const r of parsed.records) {
          // a read-through asked the API for this coupon after this page was requested: its copy is the newer
          if (rereadSince(cp, r.coupon_code, b.fetchedAt)) continue;
          records.push(r);
          pageOf.push(b.page);
          fetchedAt.push(b.fetchedAt);
        }
        rejected ||= parsed.rejected.length > 0;
        hashes.push(parsed.rejected.length === 0 ? b.hash : null);
      });
      await markUnreadable(db, unreadable, batch[0]!.fetchedAt, listing);
      const next = nextCheckpoint(cp, {
        type: 'pagesStored',
        progress: batch[batch.length - 1]!.progress,
        unmatched,
        rejected,
      })!;
      // the codes listed so far move to where the new state keeps them
      const codesIn = listedCodesIn(next.state);
      const codesWere = listedCodesIn(cp.state);
      if (codesWere === 'coupons' && codesIn === 'listedPages') await endLean(db, outsideCodes(cp.state), onRefused);
      if (codesWere === 'couponHashes' && codesIn === 'listedPages') await fillListedPages(db, listing, onRefused);
      let changed = records;
      if (codesIn === 'coupons') {
        // every row of coupons is this listing's: adding fails for a code an earlier row already listed
        if (records.length > 0) {
          await db.coupons.bulkAdd(records).catch((error: unknown) => {
            throw leanRepeat(error, records, pageOf) ?? error;
          });
        }
      } else {
        let when = fetchedAt;
        if (diffs(next.state) && records.length > 0) {
          const existing = await db.coupons.bulkGet(records.map((r) => r.coupon_code));
          const keep = records.map((r, i) => !sameRecord(existing[i], r));
          changed = records.filter((_, i) => keep[i]);
          when = fetchedAt.filter((_, i) => keep[i]);
        }
        if (changed.length > 0 && writesInto(next.state) === 'coupons') await db.coupons.bulkPut(changed);
        // staged copies keep when they were fetched: a read-through after that wins at commit
        else if (changed.length > 0)
          await db.couponStage.bulkPut(changed.map((r, i): StagedCoupon => ({ ...r, '@fetchedAt': when[i]! })));
        // the unique index over all listed codes refuses a code an earlier row already listed
        if (codesIn === 'listedPages')
          putDirect(
            db.listedPages,
            batch.map((b) => ({ page: b.page, codes: b.codes })),
            onRefused,
          );
      }
      await db.meta.put(next);
      // a page's codes ride along only while they are kept nowhere else (matching: fillListedPages reads them back)
      const keepCodes = codesIn === 'couponHashes';
      const pageHashes = batch.map((b, i): PageHash => {
        const row: PageHash = { page: b.page, hash: hashes[i] ?? null, listing, readers: RECORD_READERS_VERSION };
        if (keepCodes) row.codes = JSON.stringify(b.codes);
        return row;
      });
      putDirect(db.couponHashes, pageHashes, onRefused);
      return changed.length;
    });
  try {
    return await store();
  } catch (error) {
    // the unique index refused a code: say which page repeats which code
    if ((refused as DOMException | null)?.name === 'ConstraintError') throw await repeatError(db, batch);
    throw error ?? refused;
  }
}

/** Whether a re-sync found every page to be the committed listing's own, and that listing had no more pages. */
async function sameListing(db: ShopDatabase, cp: CouponCheckpoint, committed: string | null): Promise<boolean> {
  if (cp.state.name !== 'matching' || committed === null) return false;
  // (a read-through write since the last page would have made no difference: every page was already matched)
  return !(await db.couponHashes
    .where(':id')
    .above(cp.page)
    .filter((h) => h.listing === committed)
    .first());
}

/**
 * The stored coupons no page of this complete listing named (nor a read-through asked the API for during it):
 * each is deleted only once confirmed gone (listingEnd). None when coupons held nothing but this listing's rows
 * (and what read-throughs wrote), or when every page was the committed listing's own and it had no more pages.
 */
export async function unlistedCoupons(db: ShopDatabase, listing: string, committed: string | null): Promise<string[]> {
  return db.transaction('rw', [db.coupons, db.listedPages, db.couponHashes, db.meta], async () => {
    const cp = await storedCheckpoint(db, listing);
    if (!mayFindUnlisted(cp.state) || (await sameListing(db, cp, committed))) return [];
    // (every page matched, yet the committed listing was longer: not expected, as a page's hash covers the
    // paging; the index is filled rather than miss a code)
    if (listedCodesIn(cp.state) === 'couponHashes') await fillListedPages(db, listing, () => undefined);
    const unlisted: string[] = [];
    for (let last: string | null = null; ; ) {
      const from: Collection<Coupon, string> =
        last === null ? db.coupons.toCollection() : db.coupons.where(':id').above(last);
      const keys = (await from.limit(APPLY_CHUNK).primaryKeys()) as string[];
      if (keys.length === 0) break;
      const listed = new Set(
        (await db.listedPages
          .where('codes')
          .between(keys[0]!, keys[keys.length - 1]!, true, true)
          .keys()) as string[],
      );
      // a coupon the API confirmed one by one during the listing may have been created after its page was listed
      for (const k of keys) if (!listed.has(k) && cp.reread[k] === undefined) unlisted.push(k);
      last = keys[keys.length - 1]!;
    }
    return unlisted;
  });
}

/** The codes the last complete listing left unconfirmed (UnlistedSuspects), as a set. */
export async function unlistedSuspects(db: ShopDatabase): Promise<Set<string>> {
  return new Set(((await db.meta.get(metaKey.unlisted)) as UnlistedSuspects | undefined)?.codes ?? []);
}

/**
 * Forgets the listing under way (it is listed again) and keeps the codes it did not list for the next one to agree
 * on.
 */
export async function relistCoupons(db: ShopDatabase, suspects: string[], at: number): Promise<void> {
  await db.meta.put({ key: metaKey.unlisted, codes: suspects, at } satisfies UnlistedSuspects);
  await discardCouponListing(db);
}

/** What the commit of a complete listing does with the coupons it did not list. */
export interface ListingOutcome {
  /** Confirmed gone: deleted (unless a read-through asked for one during the listing). */
  gone: string[];
  /** Found by their own GET though unlisted: kept, as that GET answered. */
  kept: Coupon[];
  /** Found by their own GET, unreadable: the copy kept is confirmed by nothing. */
  unreadable: UnreadableRecord[];
}

/**
 * Applies a complete listing in one transaction: staged changes in, the coupons confirmed gone out, confirmation.
 * @param outcome what listingEnd settled for the coupons it did not list; null when a row without a readable code
 *   was rejected (it might be any local coupon: nothing is deleted)
 */
export async function commitListing(db: ShopDatabase, listing: string, outcome: ListingOutcome | null) {
  const tables = [db.coupons, db.couponStage, db.listedPages, db.couponHashes, db.meta];
  return db.transaction('rw', tables, async () => {
    const cp = await storedCheckpoint(db, listing);
    let written = 0;
    for (let last: string | null = null; ; ) {
      const from: Collection<StagedCoupon, string> =
        last === null ? db.couponStage.toCollection() : db.couponStage.where(':id').above(last);
      const chunk = await from.limit(APPLY_CHUNK).toArray();
      if (chunk.length === 0) break;
      // never replace what a read-through stored after this copy was fetched (rows of older builds: the start)
      const newer = chunk.filter((r) => !rereadSince(cp, r.coupon_code, r['@fetchedAt'] ?? cp.startedAt));
      await db.coupons.bulkPut(newer.map(({ '@fetchedAt': _at, ...coupon }) => coupon));
      written += newer.length;
      last = chunk[chunk.length - 1]!.coupon_code;
    }
    let deleted = 0;
    if (outcome) {
      // a read-through during the listing has the last word on its code
      const gone = outcome.gone.filter((code) => cp.reread[code] === undefined);
      if (gone.length > 0) await db.coupons.bulkDelete(gone);
      deleted = gone.length;
      const kept = outcome.kept.filter((r) => cp.reread[r.coupon_code] === undefined);
      if (kept.length > 0) await db.coupons.bulkPut(kept);
      written += kept.length;
      await markUnreadable(db, outcome.unreadable, cp.startedAt, listing);
    }
    await db.couponStage.clear();
    await db.listedPages.clear();
    await db.meta.bulkDelete([metaKey.couponSync, metaKey.emptyListing, metaKey.unlisted]);
    // this listing's page hashes now describe what coupons holds (unless written meanwhile: then none is trusted);
    // pages beyond its end belong to none
    if (hashesStale(cp.state)) await db.couponHashes.clear();
    else await db.couponHashes.where(':id').above(cp.page).delete();
    await db.meta.put({ key: metaKey.couponListing, listing });
    // A code marked unreadable before this listing began, and not rejected again by it, was listed readable,
    // answered readable by its own GET, or confirmed gone: its mark ends. Unless a row without a readable code was
    // rejected: it may have been that one.
    if (outcome)
      await clearMarks(
        db,
        (await unreadableMarks(db)).filter(
          (m) => m.unreadable.listing !== listing && m.unreadable.since < cp.startedAt,
        ),
      );
    // confirmed as of when the listing started: every record is at least that fresh
    await confirm(db, [metaKey.coupons], cp.startedAt);
    return { written, deleted };
  });
}
