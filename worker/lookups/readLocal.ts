// What a lookup holds locally: its data and when the API last confirmed it, read from IndexedDB in one transaction.
import Dexie from 'dexie';
import type { LookupPlan } from './lookupPlans';
import { sameRecord } from '../records/sameRecord';
import { latestConfirmation, type MetaRow, type ShopDatabase } from '../store/store';

export interface Local {
  data: unknown;
  syncedAt: number | null;
  /** The confirmation of this very item ("known not to exist" counts). */
  itemConfirmedAt: number | null;
  /** The code the API answered this item under, when not the one asked (Confirmation.code). */
  aliasOf?: string;
}

function toLocal(plan: LookupPlan, data: unknown, confirmations: (MetaRow | undefined)[]): Local {
  const item = confirmations[plan.confirmKeys.indexOf(plan.itemKey)];
  const local: Local = {
    data: data ?? null,
    syncedAt: latestConfirmation(confirmations),
    itemConfirmedAt: latestConfirmation([item]),
  };
  if (item && 'code' in item && typeof item.code === 'string') local.aliasOf = item.code;
  return local;
}

/** Follows a confirmation that points to the record under another code (readAlias), when none is under this one. */
async function followAlias(plan: LookupPlan, db: ShopDatabase, local: Local): Promise<Local> {
  if (local.data !== null || local.aliasOf === undefined || !plan.readAlias) return local;
  return { ...local, data: (await Dexie.ignoreTransaction(() => plan.readAlias!(db, local.aliasOf!))) ?? null };
}

/**
 * A lookup's data and confirmations as plain IndexedDB requests in one read transaction. On a keyed lookup's path
 * Dexie's transaction wrapper costs about as much as the read itself (measured: 3 requests through Dexie 0.6 ms,
 * directly 0.35 ms, one Dexie get 0.3 ms). Null when there is no open connection to use (Dexie then reopens it).
 */
function readDirect(plan: LookupPlan, db: ShopDatabase): Promise<Local> | null {
  if (!plan.request || !db.isOpen()) return null;
  try {
    const tx = db.backendDB().transaction([plan.table(db).name, db.meta.name], 'readonly');
    const data = plan.request(tx.objectStore(plan.table(db).name));
    const meta = tx.objectStore(db.meta.name);
    const confirmations = plan.confirmKeys.map((key) => meta.get(key) as IDBRequest<MetaRow | undefined>);
    return new Promise((resolve, reject) => {
      // requests of a transaction complete in order: the last one's success means all are in
      confirmations[confirmations.length - 1]!.onsuccess = () =>
        resolve(toLocal(plan, data.result, confirmations.map((r) => r.result)));
      tx.onabort = () => reject(tx.error ?? new DOMException('The read was aborted.', 'AbortError'));
    });
  } catch {
    return null; // closing or closed: Dexie's path reopens
  }
}

/** Reads a lookup's data and confirmations in one transaction. @example const local = await readLocal(plan, db); */
export function readLocal(plan: LookupPlan, db: ShopDatabase): Promise<Local> {
  const direct = readDirect(plan, db);
  // outside any transaction we may be called from (a change is told from the writer's completion handler)
  const withDexie = () =>
    Dexie.ignoreTransaction(() =>
      db.transaction('r', [plan.table(db), db.meta], async () => {
        const [data, confirmations] = await Promise.all([plan.read(db), db.meta.bulkGet(plan.confirmKeys)]);
        return toLocal(plan, data, confirmations);
      }),
    );
  return (direct ? direct.catch(withDexie) : withDexie()).then((local) => followAlias(plan, db, local));
}

/** The same data, confirmed at the same times: nothing to tell a subscriber. */
export const sameLocal = (a: Local, b: Local) =>
  a.syncedAt === b.syncedAt && a.itemConfirmedAt === b.itemConfirmedAt && sameRecord(a.data, b.data);
