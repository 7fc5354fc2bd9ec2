// The offline journal: every verdict a till gave from local data while it could not reach the shop API, kept in
// IndexedDB (it survives reloads) until the host has reconciled it and clears it.
import { ShopLookupError } from '../../src/protocol';
import type { CouponVerdict, JournalEntry } from '../../src/protocol';
import type { ShopDatabase } from '../store/store';

export interface OfflineJournal {
  /** Appends one verdict; resolves to its id. */
  record(code: string, amount: number, verdict: CouponVerdict, at: number): Promise<number>;
  /** Every entry, oldest first. */
  list(): Promise<JournalEntry[]>;
  /** Deletes entries with id ≤ `throughId` (all when omitted); resolves to how many. */
  clear(throughId?: number): Promise<number>;
}

/**
 * The journal entry of one verdict: what was asked, what was answered, and how old the data behind it was.
 * @example entryOf('WELCOME10', 32000, verdict, Date.now()).discount // 3200
 */
function entryOf(code: string, amount: number, verdict: CouponVerdict, at: number): Omit<JournalEntry, 'id'> {
  return {
    code,
    amount,
    ok: verdict.ok,
    reason: verdict.ok ? null : verdict.reason,
    discount: verdict.ok ? verdict.discount : null,
    syncedAt: verdict.syncedAt,
    at,
    kind: verdict.kind ?? null,
  };
}

/** @example const journal = createOfflineJournal(db); await journal.clear((await journal.list()).at(-1)?.id); */
export function createOfflineJournal(db: ShopDatabase): OfflineJournal {
  return {
    record: (code, amount, verdict, at) => db.journal.add(entryOf(code, amount, verdict, at) as JournalEntry),
    // ids only grow, so key order is the order the verdicts were given
    list: () => db.journal.toArray(),
    async clear(throughId) {
      if (throughId === undefined || throughId === null) {
        return db.transaction('rw', db.journal, async () => {
          const count = await db.journal.count();
          await db.journal.clear();
          return count;
        });
      }
      if (typeof throughId !== 'number' || Number.isNaN(throughId)) {
        throw new ShopLookupError('bad_request', 'clearOfflineJournal(throughId) needs the id of a journal entry.');
      }
      return db.journal.where(':id').belowOrEqual(throughId).delete();
    },
  };
}
