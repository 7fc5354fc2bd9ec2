// How uses leave the shop's records, the same in both stores: past retention (the whole code), confirmed by the shop
// API (the code kept as a mark: its first use, so a use arriving later is told as a conflict), dropped by an operator
// (a till's uses, or a code's), or of a code the shop does not have (the whole code, each use counted against its
// till: useRecords.ts's strikes).
import type { FeedHead } from './relayStore';
import type { UsesRecord } from '@shop-lookup/shop-api';
import { addHeld, addStrikes, markConflicts, type TillCounts } from './useRecords';

/** Why uses are dropped: what stays, and who is counted. */
export type UsesDropWhy = 'expired' | 'confirmed' | 'operator' | 'unknown';

/** What to drop (RelayStore.dropUses). */
export interface UsesDrop {
  /** The codes in scope; with `till` and no codes: every code. */
  codes?: string[];
  /** Only this till's uses (by its name). */
  till?: string;
  /** Also every code whose newest use was received before this, whole (retention). */
  expiredBefore?: number;
  /** Strikes counted before this are forgotten when new ones are counted (the retention's start); default none. */
  strikesFrom?: number;
  /** Default 'operator'. */
  why?: UsesDropWhy;
  /** When (a confirmation's mark, a strike), ms; default now by the store's clock. */
  at?: number;
}

/** What a drop did: the codes whose record changed (dropped or reduced), how many uses went, the head after. */
export interface UsesDropped {
  dropped: string[];
  uses: number;
  head: FeedHead;
}

/**
 * One record after a drop: null (deleted), undefined (unchanged) or the record left; with the uses that went.
 * `tills` is updated (held, strikes); `expiredBefore` forgets old strikes.
 * @example const { next, uses } = dropFrom(record, { why: 'confirmed' }, tills, now, 0);
 */
export function dropFrom(
  record: UsesRecord,
  drop: Pick<UsesDrop, 'till' | 'why'>,
  tills: Map<string, TillCounts>,
  at: number,
  expiredBefore: number,
): { next: UsesRecord | null | undefined; uses: number } {
  const why = drop.why ?? 'operator';
  if (why === 'confirmed') {
    if (record.confirmed !== undefined || record.uses.length === 0) return { next: undefined, uses: 0 };
    const [first, ...rest] = record.uses;
    for (const u of rest) addHeld(tills, u.till, -1);
    return { next: markConflicts({ ...record, confirmed: at, uses: [first!] }), uses: rest.length };
  }
  const going =
    why === 'operator' && drop.till !== undefined ? record.uses.filter((u) => u.till === drop.till) : record.uses;
  if (going.length === 0) return { next: undefined, uses: 0 };
  for (const u of going) addHeld(tills, u.till, -1);
  if (why === 'unknown') for (const u of going) addStrikes(tills, u.till, 1, at, expiredBefore);
  const rest = record.uses.filter((u) => !going.includes(u));
  return { next: rest.length === 0 ? null : markConflicts({ ...record, uses: rest }), uses: going.length };
}

/** The tills a set of records names (whose counts a drop may change). */
export const tillsOf = (records: Iterable<UsesRecord | null | undefined>): Set<string> => {
  const out = new Set<string>();
  for (const r of records) for (const u of r?.uses ?? []) out.add(u.till);
  return out;
};
