// Conflicting uses of an issued coupon: two tills accepted it (offline both, or before either heard of the other).
// The relay says so in its answer to the till that sent the later use, and in the feed's `uses` records, which every
// till reads: each marks its own journal entry (`conflict`), and status().useConflicts counts the marked entries.
import type { SyncStatus, UseConflict } from '../../../src/protocol';
import type { SharedUses, ShopDatabase } from '../../store/store';
import type { SyncStatusState } from '../../tabs/syncStatus';
import Dexie from 'dexie';

/** A journal entry (by key) and the other use it conflicts with. */
export interface ConflictMark {
  entry: string;
  conflict: UseConflict;
}

const conflictOf = (u: { till: string; at: number; orderId: string | null }, first: boolean): UseConflict => ({
  till: u.till,
  at: u.at,
  orderId: u.orderId,
  first,
});

/**
 * What a feed record says about conflicts: every use marked `conflict` conflicts with the first use (which keeps the
 * voucher: `first: true`); the first use conflicts with the first of them (so the till that sold first hears of it
 * too: `first: false`).
 * @example conflictsIn({ code, couponCode, uses: [first, second] }) // [{ entry: first.entry, conflict: { ...second,
 * first: false } }, { entry: second.entry, conflict: { ...first, first: true } }]
 */
export function conflictsIn(record: SharedUses): ConflictMark[] {
  const [first, ...later] = record.uses;
  const conflicting = later.filter((u) => u.conflict);
  if (!first || conflicting.length === 0) return [];
  return [
    { entry: first.entry, conflict: conflictOf(conflicting[0]!, false) },
    ...conflicting.map((u) => ({ entry: u.entry, conflict: conflictOf(first, true) })),
  ];
}

/**
 * Marks this till's journal entries among `marks` (the others are other tills' entries: no row has their key). An
 * entry marked already keeps its mark. Call inside a transaction that has `journal` read-write.
 */
export async function markConflicts(db: ShopDatabase, marks: ConflictMark[]): Promise<void> {
  if (marks.length === 0) return;
  const byEntry = new Map(marks.map((m) => [m.entry, m.conflict]));
  await db.journal
    .where('key')
    .anyOf([...byEntry.keys()])
    .filter((e) => !e.conflict)
    .modify((e) => {
      e.conflict = byEntry.get(e.key)!;
    });
}

/** The journal's conflicting entries: how many, and the newest (by the other use's time); null when none. */
async function countUseConflicts(db: ShopDatabase): Promise<SyncStatus['useConflicts'] | null> {
  const [count, newest] = await Promise.all([
    db.journal.orderBy('conflict.at').count(),
    db.journal.orderBy('conflict.at').last(),
  ]);
  if (count === 0 || !newest?.conflict) return null;
  return {
    count,
    newest: {
      journalId: newest.id,
      journalKey: newest.key,
      code: newest.code,
      orderId: newest.orderId ?? null,
      at: newest.at,
      conflict: newest.conflict,
    },
  };
}

/**
 * Keeps `status().useConflicts` true: counted now and after every write to the journal (a mark here or in another
 * tab, a cleared journal: `watchJournal`, which storageChanges.ts tells). Returns the stop.
 * @example const stop = watchUseConflicts({ db, status, watchJournal: (l) => changes.watch({ journal: wholeTable() },
 * l) });
 */
export function watchUseConflicts(deps: {
  db: ShopDatabase;
  status: SyncStatusState;
  watchJournal(changed: () => void): () => void;
}): () => void {
  const { db, status } = deps;
  let counting = false;
  let again = false;
  const count = (): void => {
    if (counting) {
      again = true;
      return;
    }
    counting = true;
    // (told inside the committing transaction's completion: the count runs outside its zone)
    void Dexie.ignoreTransaction(() => countUseConflicts(db))
      .then(
        (useConflicts) => {
          // (a new object each time: told only when it says something new)
          if (JSON.stringify(useConflicts) !== JSON.stringify(status.facts.get().useConflicts))
            status.facts.set({ useConflicts });
        },
        () => undefined,
      )
      .finally(() => {
        counting = false;
        if (again) {
          again = false;
          count();
        }
      });
  };
  count();
  return deps.watchJournal(count);
}
