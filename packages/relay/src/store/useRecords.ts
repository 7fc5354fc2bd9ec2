// The shop's issued-coupon uses as the feed carries them (resource `uses`, one record per issued code) and how a
// batch of uses a till sent merges into them: idempotent by (device, entry), sorted by when the till accepted each,
// every use after the first that is not the same sale (device and order) marked as a conflict. Both stores use it.
import { ShopLookupError } from '@shop-lookup/shop-api';

/** One use as a till sends it (POST relay/v1/uses). */
export interface UseInput {
  /** The till's journal entry: unique per device. */
  entry: string;
  /** The issued coupon's code: the record's key. */
  code: string;
  couponCode: string | null;
  orderId: string | null;
  /** When the till accepted it (ms, the till's clock). */
  at: number;
  override: boolean;
}

/** One use as the relay keeps it and the feed carries it. */
interface StoredUse {
  /** The till's name (its token's), or its device id when it has none. */
  till: string;
  device: string;
  entry: string;
  orderId: string | null;
  at: number;
  /** When the relay recorded it (ms, the relay's clock): what retention counts from. */
  receivedAt: number;
  override: boolean;
  /** Not the first use of its code and not the same sale (device and orderId) as the first. */
  conflict: boolean;
}

/** The feed's `uses` record of one issued code. */
export interface UsesRecord {
  code: string;
  couponCode: string | null;
  uses: StoredUse[];
}

/** The earlier use a conflicting one conflicts with. */
interface UseConflict {
  till: string;
  at: number;
  orderId: string | null;
}

/** The answer for one use of a POST. */
interface UseResult {
  entry: string;
  /** false: this (device, entry) was recorded before (a resend). */
  recorded: boolean;
  conflict: UseConflict | null;
}

/** The uses of one POST: one device, one till. */
export interface UsesBatch {
  device: string;
  till: string;
  uses: UseInput[];
  receivedAt: number;
}

/** What a store commits at once: batches of several POSTs, and what it may drop first. */
export interface UsesCommit {
  batches: UsesBatch[];
  /** The shop's cap on kept uses (maxUses): a batch that would pass it is refused as `full`. */
  max: number;
  /** Codes whose newest use was received before this are dropped first (retention). */
  expiredBefore: number;
}

/** Per batch: its answers, or `full` (nothing of it kept). */
export type UsesOutcome = { results: UseResult[] } | { full: true };

/** A use's record, its code's position in the snapshot: by `at`, then by when the relay received it. */
const byAt = (a: StoredUse, b: StoredUse): number => a.at - b.at || a.receivedAt - b.receivedAt;

/** The record with its uses sorted and their conflict marks set. */
function markConflicts(record: UsesRecord): UsesRecord {
  const uses = [...record.uses].sort(byAt);
  const first = uses[0];
  return {
    ...record,
    uses: uses.map((use, i) => ({
      ...use,
      conflict: i > 0 && first !== undefined && !(use.device === first.device && use.orderId === first.orderId),
    })),
  };
}

/** What a POST answers for `entry` of `device`, from the record that holds it. */
function resultOf(record: UsesRecord, device: string, entry: string, recorded: boolean): UseResult {
  const use = record.uses.find((u) => u.device === device && u.entry === entry);
  const first = record.uses[0]!;
  return {
    entry,
    recorded,
    conflict: use?.conflict ? { till: first.till, at: first.at, orderId: first.orderId } : null,
  };
}

/** How many uses the records hold. */
export const usesIn = (records: Iterable<UsesRecord | null | undefined>): number => {
  let n = 0;
  for (const r of records) n += r?.uses.length ?? 0;
  return n;
};

/** The newest receivedAt of a record: retention counts from it (the code's uses go together). */
export const newestReceived = (record: UsesRecord): number => Math.max(0, ...record.uses.map((u) => u.receivedAt));

/**
 * Merges `commit`'s batches into the records they touch, in order. `records` holds the current record of every code
 * the batches name (null: none) and is updated in place; `kept` is how many uses the shop holds now. Returns each
 * batch's outcome, the codes whose record changed, and how many uses the shop holds after.
 * @example const { outcomes, changed } = mergeUses(records, commit, 120);
 */
export function mergeUses(
  records: Map<string, UsesRecord | null>,
  commit: Pick<UsesCommit, 'batches' | 'max'>,
  kept: number,
): { outcomes: UsesOutcome[]; changed: Set<string>; kept: number } {
  const changed = new Set<string>();
  // per batch: null (full) or the index of each use that was recorded by it
  const taken: (Set<number> | null)[] = [];
  for (const batch of commit.batches) {
    const known = (use: UseInput) =>
      records.get(use.code)?.uses.some((u) => u.device === batch.device && u.entry === use.entry) === true;
    // a resend of an entry within one batch counts once too
    const fresh = [...batch.uses.keys()].filter(
      (i) => !known(batch.uses[i]!) && batch.uses.findIndex((u) => u.entry === batch.uses[i]!.entry) === i,
    );
    if (kept + fresh.length > commit.max && fresh.length > 0) {
      taken.push(null);
      continue;
    }
    for (const i of fresh) {
      const use = batch.uses[i]!;
      const record = records.get(use.code) ?? { code: use.code, couponCode: use.couponCode, uses: [] };
      const stored: StoredUse = {
        till: batch.till,
        device: batch.device,
        entry: use.entry,
        orderId: use.orderId,
        at: use.at,
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
    kept += fresh.length;
    taken.push(new Set(fresh));
  }
  // answered from the records as the whole commit leaves them: a later batch's earlier use shows as the conflict
  const outcomes = commit.batches.map((batch, b): UsesOutcome => {
    const fresh = taken[b];
    if (!fresh) return { full: true };
    return {
      results: batch.uses.map((use, i) => resultOf(records.get(use.code)!, batch.device, use.entry, fresh.has(i))),
    };
  });
  return { outcomes, changed, kept };
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
