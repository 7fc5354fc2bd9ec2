// What a lookup holds locally: its data and when the API last confirmed it, read from IndexedDB in one transaction.
import Dexie from 'dexie';
import type { LookupPlan } from './lookupPlans';
import { sameRecord } from '@shop-lookup/shop-api';
import { latestConfirmation, type MetaRow, type ShopDatabase } from '../store/store';

export interface Local {
  data: unknown;
  syncedAt: number | null;
  /** The confirmation of this very item ("known not to exist" counts). */
  itemConfirmedAt: number | null;
  /** The code the API answered this item under, when not the one asked (Confirmation.code). */
  aliasOf?: string;
  /**
   * Why the latest record the API sent for this item could not be read (an unreadable mark): the copy shown is
   * unconfirmed.
   */
  unreadable?: string;
}

function toLocal(plan: LookupPlan, data: unknown, confirmations: (MetaRow | undefined)[]): Local {
  const item = confirmations[plan.confirmKeys.indexOf(plan.itemKey)];
  const local: Local = {
    data: data ?? null,
    syncedAt: latestConfirmation(confirmations),
    itemConfirmedAt: latestConfirmation([item]),
  };
  if (item && 'code' in item && typeof item.code === 'string') local.aliasOf = item.code;
  if (item && 'unreadable' in item) local.unreadable = item.unreadable.message;
  return local;
}

/** Follows a confirmation that points to the record under another code (readAlias), when none is under this one. */
async function followAlias(plan: LookupPlan, db: ShopDatabase, local: Local): Promise<Local> {
  if (local.data !== null || local.aliasOf === undefined || !plan.readAlias) return local;
  return { ...local, data: (await Dexie.ignoreTransaction(() => plan.readAlias!(db, local.aliasOf!))) ?? null };
}

/**
 * A lookup's data and confirmations as plain IndexedDB requests in one read transaction: the one way a lookup reads.
 * On a keyed lookup's path Dexie's transaction wrapper costs about as much as the read itself (the bench's keyed
 * lookup rows, docs/performance.md). Throws when the connection cannot be used.
 */
function readDirect(plan: LookupPlan, db: ShopDatabase): Promise<Local> {
  const tx = db.backendDB().transaction([plan.store, db.meta.name], 'readonly');
  const data = plan.request(tx.objectStore(plan.store), db.keyRange);
  const meta = tx.objectStore(db.meta.name);
  const confirmations = plan.confirmKeys.map((key) => meta.get(key) as IDBRequest<MetaRow | undefined>);
  return new Promise((resolve, reject) => {
    // requests of a transaction complete in order: the last one's success means all are in (a plan confirmed by
    // nothing, coupons() of an engine that never lists them, has only its data request)
    (confirmations.at(-1) ?? data).onsuccess = () =>
      resolve(
        toLocal(
          plan,
          data.result,
          confirmations.map((r) => r.result),
        ),
      );
    tx.onabort = () => reject(tx.error ?? new DOMException('The read was aborted.', 'AbortError'));
  });
}

/**
 * Opens the connection as Dexie would on first use: again after the browser closed it or a versionchange, never
 * after our own close() or a failed open (those are DatabaseClosedError, as Dexie's own reads say).
 */
async function reopened(db: ShopDatabase): Promise<void> {
  if (db.hasBeenClosed() || db.hasFailed()) throw new Dexie.DatabaseClosedError();
  await db.open();
}

/** Reads a lookup's data and confirmations in one transaction. @example const local = await readLocal(plan, db); */
export function readLocal(plan: LookupPlan, db: ShopDatabase): Promise<Local> {
  // the hot path (an open connection) starts its requests at once, without an await before them
  let read: Promise<Local>;
  if (!db.isOpen()) read = reopened(db).then(() => readDirect(plan, db));
  else {
    try {
      read = readDirect(plan, db);
    } catch (error) {
      // the browser closed the connection and Dexie has not heard yet: reopen once, as Dexie does (else reported)
      if ((error as DOMException).name !== 'InvalidStateError') return Promise.reject(error);
      db.close({ disableAutoOpen: false });
      read = reopened(db).then(() => readDirect(plan, db));
    }
  }
  return read.then((local) => followAlias(plan, db, local));
}

/** The same data, confirmed at the same times: nothing to tell a subscriber. */
export const sameLocal = (a: Local, b: Local) =>
  a.syncedAt === b.syncedAt &&
  a.itemConfirmedAt === b.itemConfirmedAt &&
  a.unreadable === b.unreadable &&
  sameRecord(a.data, b.data);
