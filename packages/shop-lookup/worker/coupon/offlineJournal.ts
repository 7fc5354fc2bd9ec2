// The offline journal: every verdict a till gave from local data (whatever kept the API from deciding) and every
// issued coupon it accepted, kept in IndexedDB (it survives reloads) until the host has reconciled it and clears it.
// An entry storage refuses (a full disk) is never dropped in silence: it waits in memory, bounded, and is written
// first once storage accepts writes.
import { ShopLookupError } from '../../src/protocol';
import type { CouponVerdict, EarlierUse, JournalEntry, JournalPage, LookupError } from '../../src/protocol';
import type { CheckedOrder } from './ruleOutcome';
import { ENGINE_DEFAULTS } from '../defaults';
import { deviceIdOf } from '../store/deviceId';
import { newEntryKey } from '../store/newEntryKey';
import { engineError } from '../store/storageErrors';
import type { ClaimAnswer, OutgoingUse, ShopDatabase, TillUse } from '../store/store';

/** Entries waiting in memory for storage at most; beyond that only the verdict (`journaled: false`) tells. */
const MAX_UNSAVED_ENTRIES = 10_000;
/** The largest export page asked for (one structured clone each; the default: ENGINE_DEFAULTS.journalPageSize). */
const MAX_PAGE = 10_000;
/** After storage refused an entry, writing the waiting ones is tried again this often (and on every call). */
const RETRY_MS = 30_000;

/** One verdict to journal: the code and order it answered, and why the API did not decide it. */
interface JournalRecord {
  code: string;
  order: CheckedOrder;
  verdict: CouponVerdict;
  /** When it was decided, ms. */
  at: number;
  /** JournalEntry.cause: 'offline', the code of the API's problem, or null (the API decided). */
  cause: string | null;
  /** An accepted issued coupon the checkout sends to the relay as a claim before answering (settleClaim). */
  claiming?: boolean;
}

/** Whether an entry is in IndexedDB, and why not. */
type Journaled = { journaled: true } | { journaled: false; error: LookupError };

export interface OfflineJournal {
  /**
   * Appends one verdict; `journaled: true` once it is in IndexedDB; false when storage refused it (it waits in memory)
   * or the database is in memory itself (`memoryOnly`), with the error that says so. With `claiming`: the use as the
   * relay is to be asked for it (null when this device's id cannot be read).
   */
  record(what: JournalRecord): Promise<Journaled & { key: string | null; use: OutgoingUse | null }>;
  /**
   * The relay's answer to the claim of the entry `key`: said on the entry (`claim`); refused, the entry becomes the
   * refusal it is (`refusal`: its reason and discount) and is no use (no till use, nothing to send).
   */
  settleClaim(key: string, answer: ClaimAnswer, refusal?: CouponVerdict): Promise<void>;
  /**
   * Gives back this till's uses of `code` for `orderId` (a voided sale): each is forgotten here, its entry marked
   * `released`, a release journaled (`action: 'release'`) and put in the outbox for the relay, in one transaction.
   * Resolves the releases' journal ids (none: no such use was held).
   */
  release(code: string, orderId: string, at: number): Promise<number[]>;
  /**
   * This till's uses of the issued coupon `code` (accepted verdicts of it) that the API has not confirmed: the ones
   * stored, and the ones waiting for storage (with no id yet).
   */
  usesOf(code: string): Promise<EarlierUse[]>;
  /**
   * The API's record of `code` says it was used: this till's uses of it are confirmed, and forgotten (unsent ones
   * too).
   */
  endUses(code: string): Promise<void>;
  /** One page of entries, oldest first (see JournalPage). */
  list(page?: JournalPage): Promise<JournalEntry[]>;
  /** Deletes entries with id ≤ `throughId`; resolves to how many. The uses they recorded are kept (TillUse). */
  clear(throughId: number): Promise<number>;
  /** Stops retrying; entries still in memory are lost with it. */
  dispose(): void;
}

/** Entries waiting in memory, and why storage refused the last of them (null: storage took them all). */
export type JournalHealth = (unsaved: number, error: LookupError | null) => void;

type Entry = Omit<JournalEntry, 'id'>;

/**
 * The journal entry of one verdict: what was asked (the order's amount, reference and time), what was answered, on
 * what data (how old, from where, why not the API's word) and which overrides let it through.
 * @example entryOf({ code: 'WELCOME10', order, verdict, at: Date.now(), cause: 'offline' }).discount // 3200
 */
function entryOf({ code, order, verdict, at, cause }: JournalRecord): Entry {
  const couponCode = verdict.coupon?.coupon_code;
  return {
    key: newEntryKey(),
    code,
    amount: order.amount,
    orderId: order.orderId,
    orderAt: order.at,
    ok: verdict.ok,
    reason: verdict.ok ? null : verdict.reason,
    discount: verdict.ok ? verdict.discount : null,
    syncedAt: verdict.syncedAt,
    at,
    kind: verdict.kind ?? null,
    couponCode: typeof couponCode === 'string' ? couponCode : null,
    source: verdict.source,
    cause,
    overrides: verdict.ok ? (verdict.overrides ?? []) : [],
    shared: null,
    conflict: null,
    claim: null,
    action: 'verdict',
    released: null,
  };
}

/**
 * An entry as this release writes it. One kept from schema version 5 or before lacks what its release did not
 * record: it reads with a key made of its id (`v5-<id>`), `source: 'local'` and `cause: 'offline'` (those releases
 * journaled only verdicts decided from local data while the API could not be reached), no overrides, no order
 * reference, the decision time as the order's.
 */
export const readEntry = (e: JournalEntry): JournalEntry => {
  const kept =
    e.key !== undefined
      ? e
      : {
          ...e,
          couponCode: null,
          orderId: null,
          orderAt: e.at,
          source: 'local' as const,
          cause: 'offline',
          overrides: [],
          key: `v5-${e.id}`,
        };
  // (schema version 6 and before: nothing was shared yet; before claims and releases, none was made)
  return {
    ...kept,
    shared: kept.shared ?? null,
    conflict: kept.conflict ?? null,
    claim: kept.claim ?? null,
    action: kept.action ?? 'verdict',
    released: kept.released ?? null,
  };
};

/** An accepted issued coupon: a use of it on this till. */
const isUse = (e: Entry) => e.ok && e.kind === 'issued';

const tillUse = (e: Entry, journalId: number, device: string): TillUse => ({
  key: e.key,
  device,
  code: e.code,
  journalId,
  at: e.at,
  orderId: e.orderId,
  orderAt: e.orderAt,
  amount: e.amount,
});

const earlierUse = (e: Entry | TillUse, journalId: number | null): EarlierUse => ({
  journalId,
  journalKey: e.key,
  at: e.at,
  orderId: e.orderId,
  amount: e.amount,
  orderAt: e.orderAt,
});

/** The use as the relay is told it (POST relay/v1/uses). */
const outgoingUse = (e: Entry, device: string): OutgoingUse => ({
  entry: e.key,
  device,
  code: e.code,
  couponCode: e.couponCode,
  orderId: e.orderId,
  at: e.at,
  override: e.overrides.includes('repeat_use'),
});

/** Why an entry waits although no write failed just now (the queue is full, or a flush ended meanwhile). */
const refusedAll = (): LookupError => ({
  code: 'storage_error',
  message: `The offline journal could not be written and ${MAX_UNSAVED_ENTRIES} entries already wait in memory: this verdict is not kept. Record this sale another way.`,
});

function wholeNumber(value: unknown, what: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ShopLookupError(
      'bad_request',
      `${what} must be a whole number of 0 or more, got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/**
 * `memoryOnly`: why the database is in memory (openEngineStore.ts), null when it is IndexedDB: then no entry is
 * "journaled", since a reload loses it.
 * @example const journal = createOfflineJournal(db, (unsaved, error) => show(unsaved, error));
 * await journal.clear((await journal.list()).at(-1)!.id);
 */
export function createOfflineJournal(
  db: ShopDatabase,
  health: JournalHealth = () => undefined,
  memoryOnly: LookupError | null = null,
): OfflineJournal {
  const unsaved: Entry[] = [];
  /** Entries whose use is out as a claim now (key → when): their outbox row is written marked so. */
  const claiming = new Map<string, number>();
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
          await db.transaction('rw', [db.journal, db.tillUses, db.outbox, db.meta], async () => {
            const stored = new Set(
              await db.journal
                .where('key')
                .anyOf(batch.map((e) => e.key))
                .keys(),
            );
            const fresh = batch.filter((e) => !stored.has(e.key));
            const ids = await db.journal.bulkAdd(fresh as JournalEntry[], { allKeys: true });
            // a use is remembered with its entry, never without it, and waits in the outbox for the relay (a till
            // that syncs from no relay never sends it: the outbox only keeps it)
            const uses = fresh.flatMap((e, i) => (isUse(e) ? [[e, ids[i]!] as const] : []));
            if (uses.length === 0) return;
            const device = await deviceIdOf(db);
            await db.tillUses.bulkPut(uses.map(([e, id]) => tillUse(e, id, device)));
            await db.outbox.bulkPut(
              uses.map(([e]) => {
                const use = outgoingUse(e, device);
                const at = claiming.get(e.key);
                return at === undefined ? use : { ...use, claiming: at };
              }),
            );
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
    async record(what) {
      if (unsaved.length >= MAX_UNSAVED_ENTRIES) {
        health(unsaved.length, lastError);
        return { journaled: false, error: lastError ?? refusedAll(), key: null, use: null };
      }
      // behind the waiting entries, so ids stay in the order the verdicts were given
      const entry = entryOf(what);
      if (what.claiming) claiming.set(entry.key, what.at);
      unsaved.push(entry);
      await flush();
      let use: OutgoingUse | null = null;
      if (what.claiming) {
        const device = await deviceIdOf(db).catch(() => null);
        use = device === null ? null : { ...outgoingUse(entry, device), claiming: what.at };
      }
      const key = entry.key;
      if (unsaved.includes(entry)) return { journaled: false, error: lastError ?? refusedAll(), key, use };
      return memoryOnly ? { journaled: false, error: memoryOnly, key, use } : { journaled: true, key, use };
    },
    async settleClaim(key, answer, refusal) {
      claiming.delete(key);
      if (answer.claim === null) return;
      const change: Partial<Entry> =
        answer.claim === 'refused' && refusal && !refusal.ok
          ? { ok: false, reason: refusal.reason, discount: null, overrides: [], claim: 'refused' }
          : { claim: answer.claim };
      const waiting = unsaved.find((e) => e.key === key);
      if (waiting) Object.assign(waiting, change);
      // (a stored entry of a granted claim says so already: usesSender.ts marked it with its acknowledgement)
      if (answer.claim === 'granted') return;
      await db.transaction('rw', [db.journal, db.tillUses, db.outbox], async () => {
        await db.journal.where('key').equals(key).modify(change);
        // a use the relay refused is none: this till does not remember it, nobody is told of it
        if (change.ok === false) {
          await db.tillUses.delete(key);
          await db.outbox.delete(key);
        }
      });
    },
    async release(code, orderId, at) {
      await flush();
      return db.transaction('rw', [db.journal, db.tillUses, db.outbox, db.meta], async () => {
        const uses = (await db.tillUses.where('code').equals(code).toArray()).filter((u) => u.orderId === orderId);
        if (uses.length === 0) return [];
        const sold = await db.journal
          .where('key')
          .anyOf(uses.map((u) => u.key))
          .toArray();
        const device = await deviceIdOf(db);
        const releases = uses.map((u): Entry => {
          const entry = sold.find((e) => e.key === u.key);
          return {
            key: newEntryKey(),
            code,
            amount: u.amount,
            orderId,
            orderAt: u.orderAt,
            // (no sale: a reconciliation that counts the "yes" entries never counts a release)
            ok: false,
            reason: null,
            discount: null,
            syncedAt: null,
            at,
            kind: 'issued',
            couponCode: entry?.couponCode ?? null,
            source: 'local',
            cause: null,
            overrides: [],
            shared: null,
            conflict: null,
            claim: null,
            action: 'release',
            released: null,
          };
        });
        const ids = await db.journal.bulkAdd(releases as JournalEntry[], { allKeys: true });
        await db.journal
          .where('key')
          .anyOf(uses.map((u) => u.key))
          .modify({ released: at });
        await db.tillUses.bulkDelete(uses.map((u) => u.key));
        await db.outbox.bulkPut(
          releases.map(
            (r, i): OutgoingUse => ({
              entry: r.key,
              // (under the device that made the use: the relay gives back that device's use)
              device: uses[i]!.device ?? device,
              code,
              couponCode: r.couponCode,
              orderId,
              at,
              override: false,
              release: uses[i]!.key,
            }),
          ),
        );
        return ids as number[];
      });
    },
    async usesOf(code) {
      await flush();
      const stored = await db.tillUses.where('code').equals(code).toArray();
      const waiting = unsaved.filter((e) => e.code === code && isUse(e));
      return [...stored.map((u) => earlierUse(u, u.journalId)), ...waiting.map((e) => earlierUse(e, null))];
    },
    async endUses(code) {
      // (and the relay need not hear of them any more: it drops the uses the API shows)
      await db.transaction('rw', db.tillUses, db.outbox, async () => {
        await db.tillUses.where('code').equals(code).delete();
        await db.outbox.where('code').equals(code).delete();
      });
    },
    async list(page = {}) {
      await flush();
      const after = wholeNumber(page.after, 'offlineJournal({ after })', 0);
      const limit = Math.max(
        1,
        Math.min(MAX_PAGE, wholeNumber(page.limit, 'offlineJournal({ limit })', ENGINE_DEFAULTS.journalPageSize)),
      );
      // ids only grow, so key order is the order the verdicts were given
      return (await db.journal.where(':id').above(after).limit(limit).toArray()).map(readEntry);
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
