// The coupon listing's checkpoint as a state machine: every transition as a row of a table, what each state calls
// for, and a checkpoint of an earlier build read as none (its listing starts over).
import { describe, expect, it } from 'vitest';
import {
  CHECKPOINT_MAX_AGE_MS,
  diffs,
  hashesStale,
  listedCodesIn,
  mayFindUnlisted,
  nextCheckpoint,
  readCheckpoint,
  trustsHashes,
  writesInto,
  type CouponCheckpoint,
  type ListingEvent,
  type ListingState,
} from '../worker/sync/direct/listingCheckpoint';

const at = 1_000_000;
const progress = { page: 3, totalPages: 5, dataCount: 480, unkeyed: 0, listed: 300 };
const checkpoint = (state: ListingState, reread: Record<string, number> = {}): CouponCheckpoint => ({
  key: '@couponSync',
  listing: 'L1',
  startedAt: at,
  page: 2,
  totalPages: 5,
  dataCount: 480,
  unkeyed: 0,
  listed: 200,
  state,
  reread,
});

const lean: ListingState = { name: 'lean' };
const pristine: ListingState = { name: 'pristine' };
const direct: ListingState = { name: 'direct', hashesStale: false };
const directStale: ListingState = { name: 'direct', hashesStale: true };
const matching: ListingState = { name: 'matching', hashesStale: false };
const matchingStale: ListingState = { name: 'matching', hashesStale: true };
const diverged: ListingState = { name: 'diverged', hashesStale: false };
const divergedStale: ListingState = { name: 'diverged', hashesStale: true };
const leanWritten = (...outside: string[]): ListingState => ({ name: 'leanWritten', outside });

const stored = (unmatched: boolean, rejected: boolean): ListingEvent => ({
  type: 'pagesStored',
  progress,
  unmatched,
  rejected,
});
const wrote = (code: string, held: boolean): ListingEvent => ({
  type: 'readThrough',
  codes: [code],
  at: at + 5,
  wrote: { code, held },
});

/** An event in words, for the test titles. */
function said(e: ListingEvent): string {
  if (e.type === 'pagesStored')
    return `pages are stored (${e.unmatched ? 'one unlike the committed listing' : 'all matched'}${e.rejected ? ', a row rejected' : ''})`;
  if (e.type === 'readThrough')
    return `a read-through writes ${e.wrote?.code} (${e.wrote?.held ? 'held' : 'not held'} before)`;
  return e.type;
}

describe('listingCheckpoint', () => {
  it.each([
    ['no snapshot, an empty table', false, true, lean],
    ['no snapshot, rows written from outside before it', false, false, direct],
    ['a snapshot', true, false, matching],
    ['a snapshot (an empty one)', true, true, matching],
  ] as const)('begins a listing with %s as %j', (_, snapshot, emptyTable, state) => {
    const cp = nextCheckpoint(checkpoint(diverged), { type: 'begin', listing: 'L2', at, snapshot, emptyTable });
    expect(cp).toEqual({
      key: '@couponSync',
      listing: 'L2',
      startedAt: at,
      page: 0,
      totalPages: null,
      dataCount: null,
      unkeyed: 0,
      listed: 0,
      state,
      reread: {},
    });
  });

  it.each(
    [
      // from, event, to, (the state itself)
      ['lean', stored(true, false), lean, lean],
      ['lean', stored(true, true), pristine, lean],
      ['lean', wrote('X', false), leanWritten('X'), lean],
      ['lean', wrote('X', true), leanWritten(), lean],
      ['leanWritten', wrote('Y', false), leanWritten('X', 'Y'), leanWritten('X')],
      ['leanWritten', stored(true, false), directStale, leanWritten('X')],
      ['leanWritten', stored(true, true), directStale, leanWritten('X')],
      ['pristine', stored(true, false), pristine, pristine],
      ['pristine', stored(true, true), pristine, pristine],
      ['pristine', wrote('X', false), directStale, pristine],
      ['direct', stored(true, true), direct, direct],
      ['direct', wrote('X', true), directStale, direct],
      ['direct (stale)', stored(true, false), directStale, directStale],
      ['matching', stored(false, false), matching, matching],
      ['matching', stored(true, false), diverged, matching],
      ['matching', stored(true, true), diverged, matching],
      ['matching', wrote('X', true), matchingStale, matching],
      ['matching (stale)', stored(true, false), divergedStale, matchingStale],
      ['diverged', stored(false, false), diverged, diverged],
      ['diverged', wrote('X', false), divergedStale, diverged],
      ['diverged (stale)', stored(true, true), divergedStale, divergedStale],
    ].map(([from, event, to, state]) => [from, said(event as ListingEvent), to, event, state]) as [
      string,
      string,
      ListingState,
      ListingEvent,
      ListingState,
    ][],
  )('goes from %s, when %s, to %j', (_, _said, to, event, from) => {
    const next = nextCheckpoint(checkpoint(from), event)!;
    expect(next.state).toEqual(to);
    if (event.type === 'pagesStored') expect(next).toMatchObject({ ...progress, listing: 'L1', startedAt: at });
  });

  it('ends with a commit or a discard, and a read-through with no listing under way leaves none', () => {
    for (const state of [lean, leanWritten('X'), pristine, direct, matching, divergedStale]) {
      expect(nextCheckpoint(checkpoint(state), { type: 'commit' })).toBeNull();
      expect(nextCheckpoint(checkpoint(state), { type: 'discard' })).toBeNull();
    }
    expect(nextCheckpoint(null, wrote('X', false))).toBeNull();
    expect(nextCheckpoint(null, stored(true, false))).toBeNull();
  });

  it('resumes a listing that stored a page and is young enough, and no other', () => {
    const cp = checkpoint(diverged);
    expect(nextCheckpoint(cp, { type: 'resume', now: at + CHECKPOINT_MAX_AGE_MS })).toBe(cp);
    expect(nextCheckpoint(cp, { type: 'resume', now: at + CHECKPOINT_MAX_AGE_MS + 1 })).toBeNull();
    expect(nextCheckpoint({ ...cp, page: 0 }, { type: 'resume', now: at })).toBeNull();
    expect(nextCheckpoint(null, { type: 'resume', now: at })).toBeNull();
  });

  it('notes the latest read-through of each code, and returns the same checkpoint when nothing changed', () => {
    const cp = checkpoint(matching, { A: at + 10 });
    // asked before the noted one, with no write: nothing to store
    expect(nextCheckpoint(cp, { type: 'readThrough', codes: ['A'], at: at + 5 })).toBe(cp);
    const later = nextCheckpoint(cp, { type: 'readThrough', codes: ['A', 'B'], at: at + 20 })!;
    expect(later.reread).toEqual({ A: at + 20, B: at + 20 });
    expect(later.state).toBe(cp.state);
    expect(cp.reread).toEqual({ A: at + 10 }); // the stored checkpoint is never changed in place
    // a write into an already stale listing, of a code already noted: the same checkpoint
    const stale = checkpoint(divergedStale, { A: at + 10 });
    expect(
      nextCheckpoint(stale, { type: 'readThrough', codes: ['A'], at: at + 10, wrote: { code: 'A', held: true } }),
    ).toBe(stale);
    const leanCp = checkpoint(leanWritten('X'), { A: at + 10 });
    expect(
      nextCheckpoint(leanCp, { type: 'readThrough', codes: ['A'], at: at + 10, wrote: { code: 'A', held: true } }),
    ).toBe(leanCp);
  });

  it.each([
    // state, pages go into, listed codes kept in, diffed, hashes trusted, stale, may find unlisted coupons
    [lean, 'coupons', 'coupons', false, false, false, false],
    [leanWritten('X'), 'coupons', 'coupons', true, false, true, false],
    [pristine, 'coupons', 'listedPages', false, false, false, false],
    [direct, 'coupons', 'listedPages', true, false, false, true],
    [directStale, 'coupons', 'listedPages', true, false, true, true],
    [matching, 'stage', 'couponHashes', true, true, false, true],
    [matchingStale, 'stage', 'couponHashes', true, false, true, true],
    [diverged, 'stage', 'listedPages', true, true, false, true],
    [divergedStale, 'stage', 'listedPages', true, false, true, true],
  ] as const)('calls for the work its state %j says', (state, into, codesIn, diffed, trusted, stale, unlisted) => {
    expect([
      writesInto(state),
      listedCodesIn(state),
      diffs(state),
      trustsHashes(state),
      hashesStale(state),
      mayFindUnlisted(state),
    ]).toEqual([into, codesIn, diffed, trusted, stale, unlisted]);
  });

  it('reads a checkpoint of an earlier build (flags instead of a state) as none, so its listing starts over', () => {
    const flags = {
      key: '@couponSync',
      startedAt: at,
      mode: 'direct',
      page: 2,
      totalPages: 3,
      dataCount: 240,
      unkeyed: 0,
      listed: 200,
      unmatched: 2,
      listing: 'OLD',
      pristine: true,
      lean: true,
    };
    expect(readCheckpoint(flags)).toBeNull();
    expect(readCheckpoint({ ...flags, state: { name: 'lean' } })).toBeNull(); // no reread map: not this build's either
    expect(readCheckpoint(undefined)).toBeNull();
    const cp = checkpoint(diverged);
    expect(readCheckpoint(structuredClone(cp))).toEqual(cp);
  });
});
