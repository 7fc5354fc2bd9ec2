// Full coupon sync: every page of GET /v2/shop/coupons.
//
// Readers always see a complete snapshot. On a re-sync, changed records wait in `couponStage` and are applied,
// with deletions, in one transaction once the whole listing has arrived and adds up; a stored coupon it did not
// list is deleted only once confirmed gone (listingEnd: its GET, or a second listing); until then lookups answer
// from the last complete snapshot. Only the first sync (no complete snapshot exists yet, nothing to protect)
// writes pages straight into `coupons`, so a new till can answer before a long first sync ends.
//
// A checkpoint with every stored page lets an interrupted listing resume at the next page, unless the upstream
// listing changed meanwhile (its count or page total moved), in which case it starts over. The checkpoint's state
// (listingCheckpoint.ts) says where pages go and what is diffed; here only how far the listing got is kept.
//
// Speed: pages are requested ahead (fetchAhead) and stored behind (writeBehind), several per transaction when the
// disk is the slower side (in a re-sync, sixteen at a time). A page whose raw rows hash as in the committed listing
// (and that today's record readers read then: RECORD_READERS_VERSION) is neither validated nor diffed: nothing on it
// changed. Memory holds a few pages, whatever the size of the listing (couponListing.ts).
import { fetchAhead } from './fetchAhead';
import type { Coupon } from '../../../src/protocol';
import {
  askUnlisted,
  confirmationBound,
  emptyAnswers,
  listingEnd,
  type ListPage,
  rejectionError,
} from '@shop-lookup/shop-api';
import {
  beginListing,
  commitListing,
  discardCouponListing,
  inconsistent,
  relistCoupons,
  resumeListing,
  storePages,
  unlistedCoupons,
  unlistedSuspects,
  type ListingOutcome,
  type PageToStore,
} from './couponListing';
import { progressOf, writesInto, type CouponCheckpoint, type ListingProgress } from './listingCheckpoint';
import { ShopLookupError } from '../../../src/protocol';
import { metaKey, type CommittedListing, type EmptyListing } from '../../store/store';
import type { SyncContext } from '../syncContext';
import { writeBehind } from '../../store/writeBehind';

/** Listing changed under us (or did not add up, or must be listed again) this many times in one sync: give up
 * for now, keep the last snapshot. */
const MAX_RESTARTS = 2;
/** List pages requested ahead of the one being stored. */
const FETCH_AHEAD = 4;
/** The engine's clock moved by more than this while a listing ran: it starts over (see syncCoupons). */
const CLOCK_MOVED_MS = 1000;
/** Pages waiting for the transaction under way (they go into the next one); beyond that the listing waits. */
const MAX_QUEUED_PAGES = 8;
/**
 * Pages a re-sync's transaction waits for (or until the listing stalls: writeBehind's quietMs): most of its pages
 * match the committed listing and write only their hash and the checkpoint, so a transaction per page cost more
 * than the pages (a re-sync of 100,000 unchanged coupons spent as long in its transactions as in its requests).
 * A first sync writes whatever is queued at once: there the records are the cost and the disk the slower side.
 */
const RESYNC_BATCH = 16;

/** The key each raw row is listed under (what validation would make of it), or null when it has none. */
function codeOf(raw: unknown): string | null {
  const code = raw !== null && typeof raw === 'object' ? (raw as { coupon_code?: unknown }).coupon_code : undefined;
  // as the schema reads it (a number becomes its text) and as a rejected row is reported (its key, if readable)
  return typeof code === 'string' || typeof code === 'number' ? String(code) : null;
}

/**
 * A 64-bit hash of a page's rows as they arrived: the body text from its first `"data"` on, which holds all of
 * them (and the paging; what precedes, such as the envelope's running request_count, is left out). Equal text,
 * equal rows: no second serialisation, no copy, no await (SHA-256 through WebCrypto cost four times as much).
 * Two 32-bit lanes mixed as cyrb53 does: a changed page that hashes as before is a chance of about 2^-64.
 */
function rowsHash(body: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  // two UTF-16 units per step (half the multiplications of one per step; a build that hashed one per step left
  // hashes no page matches: each page is read once more, then matched again)
  const from = Math.max(0, body.indexOf('"data"'));
  const end = body.length - ((body.length - from) % 2);
  for (let i = from; i < end; i += 2) {
    const c = body.charCodeAt(i) | (body.charCodeAt(i + 1) << 16);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  if (end < body.length) {
    const c = body.charCodeAt(end);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}

function changedUnder(cp: ListingProgress, p: ListPage): boolean {
  return (
    (cp.dataCount !== null && p.dataCount !== null && p.dataCount !== cp.dataCount) ||
    (cp.totalPages !== null && p.totalPages !== null && p.totalPages !== cp.totalPages)
  );
}

/**
 * A complete listing with no coupon at all, while coupons are stored: deleting them all takes a second complete
 * listing that is empty too (an API or gateway briefly answering "none" must not empty every till). The first
 * keeps everything and fails the sync; the next one that is empty again goes on to the commit (true: every
 * stored coupon is confirmed gone by the two of them).
 */
async function confirmEmpty(ctx: SyncContext, startedAt: number): Promise<boolean> {
  const { db } = ctx;
  const stored = await db.coupons.count();
  if (stored === 0) return false;
  if ((await db.meta.get(metaKey.emptyListing)) !== undefined) return true;
  await discardCouponListing(db);
  await db.meta.put({ key: metaKey.emptyListing, at: startedAt } satisfies EmptyListing);
  throw new ShopLookupError(
    'empty_listing_unconfirmed',
    `The shop API listed no coupons at all, while ${stored} are stored here: nothing was deleted. If the shop really has no coupons, the next sync that finds none again deletes them.`,
  );
}

/**
 * What a complete listing that adds up does with the stored coupons it did not list (listingEnd): asks for a few
 * by their GET, and says `relist` when they are to be listed again, or what the commit deletes and keeps.
 */
async function settleUnlisted(
  ctx: SyncContext,
  cp: CouponCheckpoint,
  committed: string | null,
  everyGone: boolean,
  mayRelist: boolean,
): Promise<ListingOutcome | 'relist'> {
  const { db, report } = ctx;
  const unlisted = await unlistedCoupons(db, cp.listing, committed);
  if (unlisted.length === 0) return { gone: [], kept: [], unreadable: [] };
  const suspects = everyGone ? 'all' : await unlistedSuspects(db);
  const bound = confirmationBound(cp.totalPages ?? cp.page);
  const asked = emptyAnswers<Coupon>();
  const get = (code: string) =>
    ctx.call(async () => {
      const answer = await ctx.client.getCoupon(code, { priority: ctx.priority, signal: ctx.signal, counter: report });
      report.fetched++;
      return answer;
    });
  for (;;) {
    const end = listingEnd({
      unlisted,
      suspects,
      answers: asked.answers,
      bound,
      unaskable: asked.refused !== null,
      mayRelist,
    });
    if (end.step === 'confirm') {
      await askUnlisted(end.ask, get, (c) => c.coupon_code, asked, ctx.signal);
      continue;
    }
    if (end.step === 'commit') {
      const unreadable = end.kept.flatMap((code) => {
        const rejected = asked.unreadable.get(code);
        if (!rejected) return [];
        const error = rejectionError(`GET /v2/shop/coupons/${code}`, rejected);
        report.rejected++;
        report.errors.push(error);
        return [{ code, message: error.message }];
      });
      return { gone: end.gone, kept: end.kept.flatMap((code) => asked.kept.get(code) ?? []), unreadable };
    }
    await relistCoupons(db, end.suspects, cp.startedAt);
    if (end.step === 'relist') return 'relist';
    throw inconsistent(
      `${end.why}, and it kept changing while it was listed again${asked.refused ? ` (${asked.refused.message})` : ''}`,
    );
  }
}

/**
 * Syncs all coupons. Throws (after recording what it learned) when the listing could not be completed;
 * the last complete snapshot then stays as it was.
 * @example await syncCoupons(ctx); // ctx.report now says what was fetched, written, deleted, rejected
 */
export async function syncCoupons(ctx: SyncContext): Promise<void> {
  const { db, client, report } = ctx;
  let cp = (await resumeListing(db, ctx.now())) ?? (await beginListing(db, ctx.now()));
  // where the listing stands is its checkpoint's, in IndexedDB (storePages moves it on); here only how far it got
  let progress = progressOf(cp);
  const committed = ((await db.meta.get(metaKey.couponListing)) as CommittedListing | undefined)?.listing ?? null;
  let restarts = 0;
  let lastRows = 0;
  // How far the engine's clock is from the platform's: it moves when the first answers tell the API's time
  // (serverClock.ts). A listing stamped (its start, its pages' requests) before that would be confirmed by a clock
  // that was wrong, and its stamps compared with later ones taken by the right clock: it starts over, once.
  const correction = () => ctx.now() - Date.now();
  let stampedWith: number | null = correction();
  const pages = fetchAhead(
    (page, signal, answered) =>
      ctx.call(async () => {
        // when the request went out: a read-through asked later holds a newer copy of this page's coupons
        const fetchedAt = ctx.now();
        const raw = await client.listCouponRows(page, {
          priority: ctx.priority,
          signal: ctx.signal ? AbortSignal.any([ctx.signal, signal]) : signal,
          counter: report,
          onHeaders: (status) => status >= 200 && status < 300 && answered(),
        });
        return { ...raw, fetchedAt };
      }),
    FETCH_AHEAD,
  );
  // (a new one for each listing: a writer whose write failed keeps failing)
  const newWriter = () =>
    writeBehind<PageToStore>(
      async (batch) => {
        const written = await storePages(db, report, committed, cp.listing, batch);
        // (a listing's pages go into coupons or the stage from its beginning to its end)
        if (writesInto(cp.state) === 'coupons') report.written += written;
      },
      committed === null ? { maxQueued: MAX_QUEUED_PAGES } : { maxQueued: RESYNC_BATCH, minBatch: RESYNC_BATCH },
    );
  let writer = newWriter();
  /** Drops the listing under way and lists again from page 1. */
  const startOver = async () => {
    pages.reset();
    await writer.drain().catch(() => undefined);
    writer = newWriter();
    cp = await beginListing(db, ctx.now());
    progress = progressOf(cp);
  };

  for (;;) {
    try {
      for (let page = progress.page + 1; ; page++) {
        const p = await pages.get(page);
        report.fetched += p.rows.length;
        const clockMoved = stampedWith !== null && Math.abs(correction() - stampedWith) > CLOCK_MOVED_MS;
        if (clockMoved || changedUnder(progress, p)) {
          if (clockMoved) stampedWith = null;
          else if (++restarts > MAX_RESTARTS) throw inconsistent('it kept changing while it was being read');
          await startOver();
          page = 0;
          continue;
        }
        // still the listing we were reading: ask for the next pages while this one is checked and stored
        pages.ahead(page, p.totalPages);
        const codes: string[] = [];
        const onPage = new Set<string>();
        let unkeyed = progress.unkeyed;
        for (const raw of p.rows) {
          const code = codeOf(raw);
          // a row whose code cannot be read might be any local coupon: then nothing may be deleted
          if (code === null) unkeyed++;
          else if (onPage.size === onPage.add(code).size)
            throw inconsistent(`page ${page} repeats 1 coupon(s) of earlier rows (e.g. ${JSON.stringify(code)})`);
          else codes.push(code);
        }
        // (a code of an earlier page is refused by the index of listed codes when the page is stored)
        progress = {
          page,
          totalPages: p.totalPages,
          dataCount: p.dataCount,
          unkeyed,
          listed: progress.listed + codes.length,
        };
        await writer.push({
          page,
          rows: p.rows,
          rowsPath: p.rowsPath,
          codes,
          hash: rowsHash(p.body),
          fetchedAt: p.fetchedAt,
          progress,
        });
        ctx.progress?.('coupons', progress.listed, p.dataCount);
        lastRows = p.rows.length;
        const last = p.totalPages !== null ? page >= p.totalPages : p.rowsPath === 'data' || p.rows.length === 0;
        if (last) break;
      }
      await writer.drain();
      const { listed, unkeyed, dataCount } = progress;
      if (dataCount !== null && listed + unkeyed !== dataCount) {
        throw inconsistent(
          `${listed + unkeyed} coupons were listed but the API counted ${dataCount} (rows skipped or shifted between pages; last page had ${lastRows})`,
        );
      }
    } catch (error) {
      // no request ahead keeps running and no write is left under way; a listing that did not add up (a code on
      // two pages, fewer rows than counted: its pages shifted) is listed again, never applied
      pages.reset();
      await writer.drain().catch(() => undefined);
      const notAddingUp = (error as { code?: string }).code === 'inconsistent_listing';
      if (notAddingUp && ++restarts <= MAX_RESTARTS) {
        await startOver();
        continue;
      }
      if (notAddingUp) await discardCouponListing(db);
      throw error;
    } finally {
      pages.reset();
    }

    const { listed, unkeyed } = progress;
    const everyGone = listed + unkeyed === 0 && (await confirmEmpty(ctx, cp.startedAt));
    // a rejected row whose code could not be read might be any stored coupon: then nothing is deleted
    const blind = unkeyed > 0;
    const outcome = blind ? null : await settleUnlisted(ctx, cp, committed, everyGone, restarts < MAX_RESTARTS);
    if (outcome === 'relist') {
      restarts++;
      await startOver();
      continue;
    }
    const { written, deleted } = await commitListing(db, cp.listing, outcome);
    if (writesInto(cp.state) === 'stage') report.written += written;
    else report.written += outcome?.kept.length ?? 0;
    report.deleted += deleted;
    if (blind) {
      report.errors.push({
        code: 'deletions_skipped',
        message:
          'A coupon without a readable code was rejected, so no local coupon was deleted in this sync (it might have been that one).',
      });
    }
    return;
  }
}
