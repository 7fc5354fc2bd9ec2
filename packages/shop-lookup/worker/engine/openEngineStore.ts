// Which database the engine runs on: the shop's IndexedDB database, or, where this release cannot use one (no
// IndexedDB: some private modes, locked-down webviews, Node without one; IndexedDB refusing to open it; a database
// a newer release wrote), one in memory (fake-indexeddb, loaded only then), so the engine still answers online,
// validateCoupon too. status().storage names the cause and says that nothing survives a reload.
import type { LookupError } from '../../src/protocol';
import { storageError } from '../store/storageErrors';
import { openStore, type ShopDatabase } from '../store/store';

export interface EngineStore {
  db: ShopDatabase;
  /** Why the data lives in memory; null: it is in IndexedDB. */
  memoryOnly: LookupError | null;
}

export interface EngineStoreDeps {
  indexedDB?: IDBFactory | undefined;
  IDBKeyRange?: typeof IDBKeyRange | undefined;
  /** Opens the IndexedDB database (tests wrap it to inject storage failures). */
  openStore?: typeof openStore | undefined;
}

/** The platform's IndexedDB, if any: reading it throws in some sandboxed frames (SecurityError). */
function platformIndexedDB(): { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange } {
  try {
    const g = globalThis as { indexedDB?: IDBFactory | null; IDBKeyRange?: typeof IDBKeyRange };
    return g.indexedDB ? { indexedDB: g.indexedDB, IDBKeyRange: g.IDBKeyRange } : {};
  } catch {
    return {};
  }
}

const unavailable = (why: string): LookupError => ({
  code: 'storage_unavailable',
  message:
    `IndexedDB cannot be used here (${why}): nothing is kept for offline use or across a reload. ` +
    'Lookups and validateCoupon answer online, from memory. Use a regular (not private) window, or a browser that allows site storage, for offline checkout.',
});

/** What a failed first open says: ours (a newer schema) as it is, anything else as no usable IndexedDB, by its name. */
function whyNot(error: unknown): LookupError {
  const own = storageError(error);
  if (own?.code === 'storage_upgraded') return own;
  const inner =
    (error as { inner?: { name?: string; message?: string } } | null)?.inner ??
    (error as { name?: string; message?: string } | null);
  return unavailable(`${inner?.name ?? 'Error'}: ${inner?.message ?? String(error)}`);
}

/**
 * Opens the shop's database, or one in memory where that cannot be done.
 * @example const { db, memoryOnly } = await openEngineStore('shop-lookup', { indexedDB, IDBKeyRange });
 */
export async function openEngineStore(dbName: string, deps: EngineStoreDeps): Promise<EngineStore> {
  const platform = deps.indexedDB ? { indexedDB: deps.indexedDB, IDBKeyRange: deps.IDBKeyRange } : platformIndexedDB();
  let why: LookupError;
  if (platform.indexedDB) {
    const db = (deps.openStore ?? openStore)(dbName, platform);
    try {
      await db.open();
      return { db, memoryOnly: null };
    } catch (error) {
      db.close();
      why = whyNot(error);
    }
  } else {
    why = unavailable('this browser, or this mode of it, has no IndexedDB');
  }
  const memory = await import('fake-indexeddb');
  // a name of its own: no other engine (tab) on this device shares it
  const name = `${dbName} (in memory ${Math.random().toString(36).slice(2, 8)})`;
  return {
    db: openStore(name, { indexedDB: new memory.IDBFactory(), IDBKeyRange: memory.IDBKeyRange }),
    memoryOnly: why,
  };
}
