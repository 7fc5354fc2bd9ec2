// Recent reads of whole lists (all coupons, a product's options), shared by the watches that ask for the same list
// and kept a few seconds after the last of them ends, as Dexie's liveQuery cache keeps query results. Reading
// 10,000 coupons out of IndexedDB takes ~200 ms on a slow machine; handing over the copy in memory, a fraction.
// A committed write to what a read covers drops it (before any watch reads again: see storageChanges).
import type { Interest, StorageChanges } from './storageChanges';

/** How long a list read is kept after its last watch ended. */
const KEEP_MS = 3000;

export interface ReadCache {
  /** `load()`'s answer for `key`, from memory while nothing it covers was written since. */
  read<T>(key: string, interest: Interest, load: () => Promise<T>): Promise<T>;
  /** A watch of `key` started: keep its read while it lasts. Returns the release. */
  hold(key: string): () => void;
  dispose(): void;
}

interface Entry {
  value: Promise<unknown> | null;
  holders: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  stopChanges: (() => void) | null;
}

/** @example const cache = createReadCache(changes); await cache.read('coupons', plan.interest, () => readAll()); */
export function createReadCache(changes: StorageChanges): ReadCache {
  const entries = new Map<string, Entry>();
  const entry = (key: string) => {
    let e = entries.get(key);
    if (!e) entries.set(key, (e = { value: null, holders: 0, timer: undefined, stopChanges: null }));
    return e;
  };
  const drop = (key: string, e: Entry) => {
    e.stopChanges?.();
    clearTimeout(e.timer);
    entries.delete(key);
  };
  const expireLater = (key: string, e: Entry) => {
    clearTimeout(e.timer);
    e.timer = setTimeout(() => e.holders === 0 && drop(key, e), KEEP_MS);
  };
  return {
    read<T>(key: string, interest: Interest, load: () => Promise<T>): Promise<T> {
      const e = entry(key);
      // early: the cache forgets a read before the watches it concerns read again
      e.stopChanges ??= changes.watch(interest, () => (e.value = null), true);
      if (e.holders === 0) expireLater(key, e);
      if (e.value) return e.value as Promise<T>;
      const value = load();
      e.value = value;
      value.catch(() => e.value === value && (e.value = null));
      return value;
    },
    hold(key) {
      const e = entry(key);
      e.holders++;
      clearTimeout(e.timer);
      return () => {
        if (--e.holders === 0) expireLater(key, e);
      };
    },
    dispose() {
      for (const [key, e] of entries) drop(key, e);
    },
  };
}
