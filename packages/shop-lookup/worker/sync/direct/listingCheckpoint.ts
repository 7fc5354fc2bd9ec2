// The coupon listing's checkpoint as a state machine: its named states, and every transition in one pure function.
// couponListing.ts does the IndexedDB work a state calls for; nothing here touches the database. The checkpoint is
// a plain object (stored in `meta` under '@couponSync', structured-clone safe), written only when it changes.
//
//   state        | what it is                                                    | pages go | listed codes | diffed
//   lean         | first listing, into an empty table nobody else wrote,         | coupons  | = the rows   | no
//                | no row rejected                                               |          | of coupons   |
//   leanWritten  | lean, then a read-through wrote coupons (`outside`: the codes | coupons  | = the rows   | (leaves
//                | coupons did not hold: not the listing's own)                  |          | but outside  | at once)
//   pristine     | first listing, into an empty table nobody else wrote, after   | coupons  | listedPages  | no
//                | a row was rejected                                            |          |              |
//   direct       | first listing, into a table others wrote (before or during)   | coupons  | listedPages  | yes
//   matching     | re-sync, every page so far the committed listing's own        | stage    | couponHashes | yes
//   diverged     | re-sync with pages unlike the committed listing's             | stage    | listedPages  | yes
//
//   from \ event | pagesStored              | pagesStored, rejected | read-through wrote | commit, discard
//   lean         | lean                     | pristine              | leanWritten        | (none)
//   leanWritten  | direct (stale)           | direct (stale)        | leanWritten        | (none)
//   pristine     | pristine                 | pristine              | direct (stale)     | (none)
//   direct       | direct                   | direct                | direct (stale)     | (none)
//   matching     | matching, or diverged if a page did not match    | matching (stale)   | (none)
//   diverged     | diverged                 | diverged              | diverged (stale)   | (none)
//
// `begin` makes lean (no snapshot, empty table), direct (no snapshot, rows there) or matching (a snapshot exists);
// `resume` keeps a checkpoint young enough and past page 0. Every read-through also notes when it asked the API
// for which codes (`reread`). "stale": a read-through wrote coupons during the listing, so from then on no page
// hash is trusted, and none is kept when it ends (committed, discarded or left behind). At its end, lean,
// leanWritten and pristine find nothing unlisted (coupons holds only their rows and what read-throughs wrote), direct
// and diverged may find stored coupons no page listed, matching only if the committed listing had more pages.
//
// The end of a complete listing that adds up (`listingEnd` in packages/shop-api/src/api/unlistedRecords.ts, which the
// relay's upstream listing shares): a stored coupon no page listed (an "unlisted" one) is deleted only once it is
// confirmed gone, since offset paging that shifted under the listing (a coupon deleted on a page already read) skips
// a live coupon without changing the count. Each unlisted code is `agreed` (the previous complete listing did not
// list it either: the suspects it left), answered `gone` (its own GET: the API's not found) or `there` (its GET found
// it: the pages skipped it), or still open:
//
//   step    | when                                                             | then
//   commit  | every unlisted code agreed or gone                               | applied; those deleted
//   confirm | a few open (at most `bound`: fewer GETs than a listing costs)    | each asked for by its GET
//   relist  | one `there` (the pages skipped), too many open, or a GET refused; | not applied: listed again from
//           | this sync may list once more                                     | page 1; the unlisted not `there`
//           |                                                                  | are the next listing's suspects
//   commit  | one `there`, none open, no more listings in this sync            | applied: the `there` ones kept as
//           |                                                                  | their GETs answered, gone deleted
//   stop    | too many open (or a GET refused), no more listings in this sync  | not applied; the suspects stay
//
// A listing that does not add up (a code on two pages, the count or page total moving, fewer rows than counted)
// is listed again too, never applied (syncCoupons bounds how often in one sync).

/** A state of the listing (see the table above). */
export type ListingState =
  | { name: 'lean' }
  | { name: 'leanWritten'; outside: string[] }
  | { name: 'pristine' }
  | { name: 'direct' | 'matching' | 'diverged'; hashesStale: boolean };

type ListingStateName = ListingState['name'];

/** How far the listing got: the pages it has completely stored, and what the API said about the whole. */
export interface ListingProgress {
  /** Last page completely handled (0: none yet). */
  page: number;
  totalPages: number | null;
  dataCount: number | null;
  /** Rejected rows whose code could not be read: they count toward dataCount, and forbid deletions. */
  unkeyed: number;
  /** Codes listed so far (all distinct: the listed codes are kept under a unique index). */
  listed: number;
}

/** Where an interrupted coupon listing stands, so the next sync resumes instead of starting over. */
export interface CouponCheckpoint extends ListingProgress {
  key: '@couponSync';
  /** Names this listing in `couponHashes`; its hashes are trusted once it is the committed listing. */
  listing: string;
  startedAt: number;
  state: ListingState;
  /**
   * Codes the API was asked for one by one during this listing, and when that request went out. A listed copy
   * fetched before then is older than what the read-through stored: it is neither written nor applied, and the
   * code is not deleted for being unlisted.
   */
  reread: Record<string, number>;
}

export type ListingEvent =
  | { type: 'begin'; listing: string; at: number; snapshot: boolean; emptyTable: boolean }
  | { type: 'resume'; now: number }
  /** A batch of pages was stored: `unmatched` if a page was not the committed listing's, `rejected` if a row was. */
  | { type: 'pagesStored'; progress: ListingProgress; unmatched: boolean; rejected: boolean }
  /** A read-through asked the API for `codes` at `at`; `wrote`: it wrote `code`, which coupons held or not before. */
  | { type: 'readThrough'; codes: string[]; at: number; wrote?: { code: string; held: boolean } | undefined }
  | { type: 'commit' }
  | { type: 'discard' };

/** A checkpoint older than this is not resumed: too much may have changed. */
export const CHECKPOINT_MAX_AGE_MS = 6 * 60 * 60 * 1000;

/** What each state calls for. */
const traits: Record<
  ListingStateName,
  { into: 'coupons' | 'stage'; codesIn: 'coupons' | 'couponHashes' | 'listedPages'; diff: boolean }
> = {
  lean: { into: 'coupons', codesIn: 'coupons', diff: false },
  leanWritten: { into: 'coupons', codesIn: 'coupons', diff: true },
  pristine: { into: 'coupons', codesIn: 'listedPages', diff: false },
  direct: { into: 'coupons', codesIn: 'listedPages', diff: true },
  matching: { into: 'stage', codesIn: 'couponHashes', diff: true },
  diverged: { into: 'stage', codesIn: 'listedPages', diff: true },
};

/**
 * Where pages go: straight into `coupons` (a first listing: no snapshot to protect), or `couponStage` until the
 * commit.
 */
export const writesInto = (s: ListingState) => traits[s.name].into;
/** Where the codes listed so far are kept (for finding a code listed twice, and the coupons to delete). */
export const listedCodesIn = (s: ListingState) => traits[s.name].codesIn;
/** Whether listed records are compared with the stored ones (false: the table holds nothing but this listing's). */
export const diffs = (s: ListingState) => traits[s.name].diff;
/** Whether a page whose rows hash as in the committed listing may be skipped (only a re-sync has one). */
export const trustsHashes = (s: ListingState) => (s.name === 'matching' || s.name === 'diverged') && !s.hashesStale;
/** Whether a read-through wrote coupons during the listing: none of its page hashes is kept when it commits. */
export const hashesStale = (s: ListingState) => s.name === 'leanWritten' || ('hashesStale' in s && s.hashesStale);
/** Codes coupons holds that the listing did not list (a lean listing written from outside). */
export const outsideCodes = (s: ListingState) => (s.name === 'leanWritten' ? s.outside : []);
/**
 * Whether the end of this listing may find stored coupons it did not name: not when coupons held nothing but its own
 * rows (and what read-throughs wrote, which is never deleted for being unlisted). A matching re-sync finds some only
 * if the committed listing had more pages.
 */
export const mayFindUnlisted = (s: ListingState) =>
  s.name === 'direct' || s.name === 'matching' || s.name === 'diverged';

/** The progress part of a checkpoint. */
export function progressOf(cp: CouponCheckpoint): ListingProgress {
  return { page: cp.page, totalPages: cp.totalPages, dataCount: cp.dataCount, unkeyed: cp.unkeyed, listed: cp.listed };
}

const stateNames = new Set(Object.keys(traits));

/**
 * The checkpoint stored in `meta`, or null when there is none or it is not one this code can read: a checkpoint
 * of an earlier build (flags `mode`, `pristine`, `lean`, ... instead of a state) is not carried across; its listing
 * starts over, as a first listing into a table that holds rows (diffed) or as a re-sync.
 * @example const cp = readCheckpoint(await db.meta.get('@couponSync'));
 */
export function readCheckpoint(row: unknown): CouponCheckpoint | null {
  const cp = row as Partial<CouponCheckpoint> | undefined;
  if (!cp || typeof cp !== 'object' || typeof cp.listing !== 'string' || typeof cp.page !== 'number') return null;
  if (!cp.state || !stateNames.has(cp.state.name) || typeof cp.reread !== 'object' || cp.reread === null) return null;
  return cp as CouponCheckpoint;
}

function begin(e: Extract<ListingEvent, { type: 'begin' }>): CouponCheckpoint {
  const state: ListingState = e.snapshot
    ? { name: 'matching', hashesStale: false }
    : e.emptyTable
      ? { name: 'lean' }
      : { name: 'direct', hashesStale: false };
  const progress: ListingProgress = { page: 0, totalPages: null, dataCount: null, unkeyed: 0, listed: 0 };
  return { key: '@couponSync', listing: e.listing, startedAt: e.at, ...progress, state, reread: {} };
}

function stored(s: ListingState, e: Extract<ListingEvent, { type: 'pagesStored' }>): ListingState {
  switch (s.name) {
    case 'lean':
      return e.rejected ? { name: 'pristine' } : s;
    case 'leanWritten':
      return { name: 'direct', hashesStale: true };
    case 'matching':
      return e.unmatched ? { name: 'diverged', hashesStale: s.hashesStale } : s;
    default:
      return s;
  }
}

function written(s: ListingState, wrote: { code: string; held: boolean }): ListingState {
  switch (s.name) {
    case 'lean':
    case 'leanWritten': {
      // the rows of a lean listing are the codes it listed: remember what is not one of them
      if (s.name === 'leanWritten' && wrote.held) return s;
      const outside = s.name === 'leanWritten' ? s.outside : [];
      return { name: 'leanWritten', outside: wrote.held ? outside : [...outside, wrote.code] };
    }
    case 'pristine':
      return { name: 'direct', hashesStale: true };
    default:
      return s.hashesStale ? s : { ...s, hashesStale: true };
  }
}

function reread(cp: CouponCheckpoint, codes: string[], at: number): Record<string, number> {
  let out = cp.reread;
  for (const code of codes) {
    const before = out[code];
    if (before !== undefined && before >= at) continue;
    if (out === cp.reread) out = { ...out };
    out[code] = at;
  }
  return out;
}

/**
 * The checkpoint after `event`: the same object when nothing changed (then it need not be written), null when
 * there is no listing (any more).
 * @example const next = nextCheckpoint(cp, { type: 'readThrough', codes: ['WELCOME10'], at: now });
 * if (next !== cp) await db.meta.put(next!);
 */
export function nextCheckpoint(cp: CouponCheckpoint | null, event: ListingEvent): CouponCheckpoint | null {
  if (event.type === 'begin') return begin(event);
  if (cp === null) return null;
  switch (event.type) {
    case 'resume':
      return event.now - cp.startedAt > CHECKPOINT_MAX_AGE_MS || cp.page === 0 ? null : cp;
    case 'pagesStored':
      return { ...cp, ...event.progress, state: stored(cp.state, event) };
    case 'readThrough': {
      const codes = reread(cp, event.codes, event.at);
      const state = event.wrote ? written(cp.state, event.wrote) : cp.state;
      return codes === cp.reread && state === cp.state ? cp : { ...cp, reread: codes, state };
    }
    case 'commit':
    case 'discard':
      return null;
  }
}
