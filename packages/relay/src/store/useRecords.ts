// The shop's issued-coupon uses as the feed carries them (resource `uses`, one record per issued code) and how a
// batch a till sent merges into them: idempotent by (device, entry); each use ordered by a time the relay can trust
// (the till's `at`, bounded: tillHeard.ts); every use after the first that is not the same sale (device and order)
// marked as a conflict; a claim (an online verdict) recorded only as the first use; a release dropping the till's
// own use; each till within its share of the shop's cap. Both stores use it.
import {
  type RecordedUse,
  type ReleaseResult,
  type ReleaseSent,
  ShopLookupError,
  type UseConflict,
  type UseResult,
  type UsesRecord,
  type UseSent,
} from '@shop-lookup/shop-api';
import { earliestAt, heardAt, type TillHeard } from './tillHeard';

// (the wire's shapes, a use and a release as a till sends them, a use as the relay keeps it and the feed's `uses`
// record carries it, the answers: packages/shop-api/src/feed/)

/** A till's standing in the shop's uses. */
export interface TillCounts {
  /** Uses of it the shop holds now. */
  held: number;
  /** Its uses of codes the shop does not have, dropped: they count against its share until retention passes. */
  strikes: number;
  /** When the first of those strikes was counted (null: none). */
  strikesSince: number | null;
}

/** The uses (and releases) of one POST: one device, one till. */
export interface UsesBatch {
  device: string;
  till: string;
  uses: UseSent[];
  receivedAt: number;
  /** The uses are claims: recorded only as the first use of their code (or the same sale as the first). */
  claim?: boolean;
  /** Given back after the uses (voided sales). */
  releases?: ReleaseSent[];
}

/** What a store commits at once: batches of several POSTs, and what it may drop first. */
export interface UsesCommit {
  batches: UsesBatch[];
  /** The shop's cap on kept uses (maxUses): a batch that would pass it is refused as `full`. */
  max: number;
  /** One till's share of the cap (maxUsesPerTill): a batch that would take its till past it is `tillFull`. */
  maxPerTill?: number;
  /** Codes whose newest use was received before this are dropped first (retention); strikes before it expired. */
  expiredBefore: number;
  /** Codes the relay saw the shop API answer for (they exist): not checked again. */
  known?: string[];
}

/** Per batch: its answers, or `full` / `tillFull` (nothing of it kept). */
export type UsesOutcome =
  | { results: UseResult[]; releases?: ReleaseResult[] | undefined }
  | { full: true }
  | { tillFull: true; held: number };

/** What a merge changed besides the records. */
export interface UsesMerged {
  outcomes: UsesOutcome[];
  /** Codes whose record changed (set to null in `records`: delete it). */
  changed: Set<string>;
  /** Codes that had no record before. */
  created: Set<string>;
  kept: number;
  /** Uses recorded, conflicts among them, claims refused and releases done: for the metrics. */
  counts: { recorded: number; conflicts: number; claimsRefused: number; released: number };
}

const NONE: TillCounts = { held: 0, strikes: 0, strikesSince: null };

/** The strikes of a till still counted (those of the retention window). */
export const strikesOf = (c: TillCounts | undefined, expiredBefore: number): number =>
  c && c.strikesSince !== null && c.strikesSince >= expiredBefore ? c.strikes : 0;

/** A use's position among its code's: the relay's time, then the till's, then arrival. */
const byAt = (a: RecordedUse, b: RecordedUse): number =>
  a.at - b.at || (a.claimedAt ?? a.at) - (b.claimedAt ?? b.at) || a.receivedAt - b.receivedAt;

const sameSale = (a: RecordedUse, b: { device: string; orderId: string | null }) =>
  a.device === b.device && a.orderId === b.orderId;

/** The record with its uses sorted and their conflict marks set (a confirmed mark's first use stays first). */
export function markConflicts(record: UsesRecord): UsesRecord {
  const uses =
    record.confirmed !== undefined && record.uses.length > 0
      ? [record.uses[0]!, ...record.uses.slice(1).sort(byAt)]
      : [...record.uses].sort(byAt);
  const first = uses[0];
  const confirmed = record.confirmed !== undefined;
  return {
    ...record,
    uses: uses.map((use, i) => ({
      ...use,
      conflict: i > 0 && first !== undefined && (confirmed || !sameSale(use, first)),
    })),
  };
}

const conflictOf = (u: RecordedUse): UseConflict => ({ till: u.till, at: u.at, orderId: u.orderId });

/** What a POST answers for `entry` of `device`, from the record that holds it. */
function resultOf(record: UsesRecord | null | undefined, device: string, entry: string, recorded: boolean): UseResult {
  const use = record?.uses.find((u) => u.device === device && u.entry === entry);
  const first = record?.uses[0];
  return { entry, recorded, conflict: use?.conflict && first ? conflictOf(first) : null };
}

/** The newest receivedAt of a record (or its confirmation): retention counts from it (the code's uses go together). */
export const newestReceived = (record: UsesRecord): number =>
  Math.max(0, record.confirmed ?? 0, ...record.uses.map((u) => u.receivedAt));

/** Adds `delta` uses to a till's count (delta < 0: dropped). */
export function addHeld(tills: Map<string, TillCounts>, till: string, delta: number): void {
  const c = tills.get(till) ?? NONE;
  tills.set(till, { ...c, held: Math.max(0, c.held + delta) });
}

/** Counts `n` strikes against a till at `at` (a strike older than `expiredBefore` is forgotten first). */
export function addStrikes(tills: Map<string, TillCounts>, till: string, n: number, at: number, expiredBefore: number) {
  const c = tills.get(till) ?? NONE;
  const kept = strikesOf(c, expiredBefore);
  tills.set(till, { ...c, strikes: kept + n, strikesSince: kept > 0 ? c.strikesSince : at });
}

/**
 * Merges `commit`'s batches into the records they touch, in order. `records` holds the current record of every code
 * the batches name (null: none) and is updated in place (null: delete); so are `tills` (every till of the batches
 * and of the uses they release) and `heard` (every till of the batches). `kept` is how many uses the shop holds now.
 * @example const { outcomes, changed } = mergeUses(records, commit, 120, tills, heard);
 */
export function mergeUses(
  records: Map<string, UsesRecord | null>,
  commit: Pick<UsesCommit, 'batches' | 'max' | 'maxPerTill' | 'expiredBefore'>,
  kept: number,
  tills: Map<string, TillCounts>,
  heard: Map<string, TillHeard | null>,
): UsesMerged {
  const changed = new Set<string>();
  const created = new Set<string>();
  const counts = { recorded: 0, conflicts: 0, claimsRefused: 0, released: 0 };
  const perTill = commit.maxPerTill ?? Number.POSITIVE_INFINITY;
  // per batch: null (full), the indexes recorded by it, the claims refused (index → the first use), the releases
  const done: (
    | { refused: UsesOutcome }
    | { taken: Set<number>; refused: Map<number, RecordedUse>; releases?: ReleaseResult[] }
  )[] = [];
  for (const batch of commit.batches) {
    const before = heard.get(batch.till) ?? null;
    // a claim is made online, now: the relay's own time orders it
    const floor = batch.claim ? batch.receivedAt : earliestAt(before, batch.receivedAt);
    heard.set(batch.till, heardAt(before, batch.receivedAt));
    const known = (use: UseSent) =>
      records.get(use.code)?.uses.some((u) => u.device === batch.device && u.entry === use.entry) === true;
    // a resend of an entry within one batch counts once too
    const fresh = [...batch.uses.keys()].filter(
      (i) => !known(batch.uses[i]!) && batch.uses.findIndex((u) => u.entry === batch.uses[i]!.entry) === i,
    );
    // a claim of a code whose first use is another sale is refused, and not recorded
    const refused = new Map<number, RecordedUse>();
    if (batch.claim)
      for (const i of fresh) {
        const use = batch.uses[i]!;
        const first = records.get(use.code)?.uses[0];
        const record = records.get(use.code);
        if (
          first &&
          (record?.confirmed !== undefined || !sameSale(first, { device: batch.device, orderId: use.orderId }))
        )
          refused.set(i, first);
      }
    const taking = fresh.filter((i) => !refused.has(i));
    const till = tills.get(batch.till) ?? NONE;
    if (taking.length > 0 && till.held + strikesOf(till, commit.expiredBefore) + taking.length > perTill) {
      done.push({ refused: { tillFull: true, held: till.held } });
      continue;
    }
    if (taking.length > 0 && kept + taking.length > commit.max) {
      done.push({ refused: { full: true } });
      continue;
    }
    for (const i of taking) {
      const use = batch.uses[i]!;
      const held = records.get(use.code);
      if (!held) created.add(use.code);
      const record = held ?? { code: use.code, couponCode: use.couponCode, uses: [] };
      const at = Math.max(Math.min(use.at, batch.receivedAt), floor ?? Number.NEGATIVE_INFINITY);
      const stored: RecordedUse = {
        till: batch.till,
        device: batch.device,
        entry: use.entry,
        orderId: use.orderId,
        at,
        claimedAt: use.at,
        receivedAt: batch.receivedAt,
        override: use.override,
        conflict: false,
      };
      records.set(
        use.code,
        markConflicts({ ...record, couponCode: record.couponCode ?? use.couponCode, uses: [...record.uses, stored] }),
      );
      changed.add(use.code);
    }
    addHeld(tills, batch.till, taking.length);
    kept += taking.length;
    counts.recorded += taking.length;
    counts.claimsRefused += refused.size;
    const releases = batch.releases?.map((release): ReleaseResult => {
      const record = records.get(release.code);
      const use = record?.uses.find((u) => u.device === batch.device && u.entry === release.use);
      if (!record || !use) return { entry: release.entry, released: false };
      if (use.till !== batch.till) return { entry: release.entry, released: false, refused: true };
      const rest = record.uses.filter((u) => u !== use);
      records.set(release.code, rest.length === 0 ? null : markConflicts({ ...record, uses: rest }));
      changed.add(release.code);
      addHeld(tills, use.till, -1);
      kept -= 1;
      counts.released += 1;
      return { entry: release.entry, released: true };
    });
    done.push({ taken: new Set(taking), refused, ...(releases ? { releases } : {}) });
  }
  // answered from the records as the whole commit leaves them: a later batch's earlier use shows as the conflict
  const outcomes = commit.batches.map((batch, b): UsesOutcome => {
    const d = done[b]!;
    if (!('taken' in d)) return d.refused;
    const results = batch.uses.map((use, i) => {
      const first = d.refused.get(i);
      if (first)
        return {
          entry: use.entry,
          recorded: false,
          conflict: null,
          claimed: false,
          first: { ...conflictOf(first), device: first.device },
        };
      const result = resultOf(records.get(use.code), batch.device, use.entry, d.taken.has(i));
      if (d.taken.has(i) && result.conflict) counts.conflicts++;
      return batch.claim ? { ...result, claimed: result.conflict === null } : result;
    });
    return d.releases ? { results, releases: d.releases } : { results };
  });
  return { outcomes, changed, created, kept, counts };
}

/**
 * The error of a shop's uses at their cap (maxUses) after the expired ones were dropped.
 * @example throw usesFull(100_000);
 */
export function usesFull(max: number): ShopLookupError {
  return new ShopLookupError(
    'uses_full',
    `USES FULL: this shop's relay keeps at most ${max} uses (maxUses) and none has expired or been confirmed by the shop API yet; ` +
      'send them again after Retry-After, or raise maxUses / shorten usesRetentionMs on the relay.',
    { status: 503 },
  );
}

/**
 * The error of a till that holds its whole share of the shop's uses (maxUsesPerTill).
 * @example throw tillUsesFull('front-1', 5_000);
 */
export function tillUsesFull(till: string, share: number): ShopLookupError {
  return new ShopLookupError(
    'till_uses_full',
    `TILL USES FULL: till ${till} holds its whole share of this shop's uses on the relay (${share}, maxUsesPerTill; uses of codes the shop does not have count until they expire); ` +
      "none of these was kept. The other tills are not affected. Send them again after Retry-After; the relay's operator can list and drop this till's uses.",
    { status: 429 },
  );
}
