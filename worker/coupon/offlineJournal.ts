// The offline journal: every verdict a till gave from local data while it could not reach the shop API, kept in
// IndexedDB (it survives reloads) until the host has reconciled it and clears it. An entry storage refuses (a full
// disk) is never dropped in silence: it waits in memory, bounded, and is written first once storage accepts writes.
import { ShopLookupError } from '../../src/protocol';
import type { CouponVerdict, JournalEntry, JournalPage, LookupError } from '../../src/protocol';
import { newEntryKey } from '../store/newEntryKey';
import { engineError } from '../store/storageErrors';
import type { ShopDatabase } from '../store/store';

/** Entries waiting in memory for storage at most; beyond that only the verdict (`journaled: false`) tells. */
export const MAX_UNSAVED_ENTRIES = 10_000;
/** An export page: the default size, and the largest one asked for (one structured clone each). */
const DEFAULT_PAGE = 1_000;
const MAX_PAGE = 10_000;
/** After storage refused an entry, writing the waiting ones is tried again this often (and on every call). */
const RETRY_MS = 30_000;

export interface OfflineJournal {
  /** Appends one verdict; resolves to true once it is in IndexedDB, false when storage refused it (kept in memory). */
  record(code: string, amount: number, verdict: CouponVerdict, at: number): Promise<boolean>;
  /** One page of entries, oldest first (see JournalPage). */
  list(page?: JournalPage): Promise<JournalEntry[]>;
  /** Deletes entries with id ≤ `throughId`; resolves to how many. */
  clear(throughId: number): Promise<number>;
  /** Stops retrying; entries still in memory are lost with it. */
  dispose(): void;
}

export interface JournalHealth {
  /** Entries waiting in memory, and why storage refused the last of them (null: storage took them all). */
  (unsaved: number, error: LookupError | null): void;
}

type Entry = Omit<JournalEntry, 'id'>;

/**
 * The journal entry of one verdict: what was asked, what was answered, and how old the data behind it was.
 * @example entryOf('WELCOME10', 32000, verdict, Date.now()).discount // 3200
 */
function entryOf(code: string, amount: number, verdict: CouponVerdict, at: number): Entry {
  return {
    key: newEntryKey(),
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

function wholeNumber(value: unknown, what: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ShopLookupError('bad_request', `${what} must be a whole number of 0 or more, got ${JSON.stringify(value)}.`);
  }
  return value;
}

/** @example const journal = createOfflineJournal(db, (unsaved, error) => show(unsaved, error)); await journal.clear((await journal.list()).at(-1)!.id); */
export function createOfflineJournal(db: ShopDatabase, health: JournalHealth = () => undefined): OfflineJournal {
  const unsaved: Entry[] = [];
  let lastError: LookupError | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<boolean> | null = null;

  const retryLater = () =>
    (timer ??= setTimeout(() => {
      timer = undefined;
      void flush();
    }, RETRY_MS));

  /**
   * Writes the waiting entries, oldest first; true when none is left waiting. A batch is one transaction, so storage
   * that refuses some of its writes (WebKit refuses each write of a full disk on its own request) writes none of it;
   * and an entry whose key is stored already is not written again, whatever a failure left behind.
   */
  function flush(): Promise<boolean> {
    if (flushing) return flushing;
    if (unsaved.length === 0) return Promise.resolve(true);
    flushing = (async () => {
      try {
        while (unsaved.length > 0) {
          const batch = unsaved.slice();
          await db.transaction('rw', db.journal, async () => {
            const stored = new Set(await db.journal.where('key').anyOf(batch.map((e) => e.key)).keys());
            await db.journal.bulkAdd(batch.filter((e) => !stored.has(e.key)) as JournalEntry[]);
          });
          unsaved.splice(0, batch.length); // (entries added meanwhile stay for the next round)
        }
        clearTimeout(timer);
        timer = undefined;
        // storage takes writes again: nothing waits any more
        if (lastError !== null) health(0, null);
        lastError = null;
        return true;
      } catch (error) {
        lastError = engineError(error);
        health(unsaved.length, lastError);
        retryLater();
        return false;
      } finally {
        flushing = null;
      }
    })();
    return flushing;
  }

  return {
    async record(code, amount, verdict, at) {
      if (unsaved.length >= MAX_UNSAVED_ENTRIES) {
        health(unsaved.length, lastError);
        return false;
      }
      // behind the waiting entries, so ids stay in the order the verdicts were given
      const entry = entryOf(code, amount, verdict, at);
      unsaved.push(entry);
      await flush();
      return !unsaved.includes(entry);
    },
    async list(page = {}) {
      await flush();
      const after = wholeNumber(page.after, 'offlineJournal({ after })', 0);
      const limit = Math.max(1, Math.min(MAX_PAGE, wholeNumber(page.limit, 'offlineJournal({ limit })', DEFAULT_PAGE)));
      // ids only grow, so key order is the order the verdicts were given
      return db.journal.where(':id').above(after).limit(limit).toArray();
    },
    async clear(throughId) {
      if (typeof throughId !== 'number' || !Number.isFinite(throughId)) {
        throw new ShopLookupError(
          'bad_request',
          `clearOfflineJournal(throughId) needs the id of the last journal entry you reconciled, got ${JSON.stringify(throughId)}: nothing was deleted.`,
        );
      }
      await flush();
      return db.journal.where(':id').belowOrEqual(throughId).delete();
    },
    dispose() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
