// Which watches a committed write concerns. Dexie announces every committed read-write transaction (other tabs'
// too, through its BroadcastChannel) as "mutated parts": per table, the key ranges written (see ObservabilitySet
// in dexie.d.ts). One listener matches them against what each watch reads, so following a lookup costs no query
// until its data is written; a Dexie liveQuery per watch would run its query once more at the start.
import Dexie, { RangeSet, rangesOverlap, type IndexableType, type ObservabilitySet } from 'dexie';

/** What a watch reads: per table, the primary keys (a RangeSet). */
export type Interest = Record<string, RangeSet>;

/** The lowest and highest keys IndexedDB orders (as Dexie writes them; Dexie.maxKey depends on the platform). */
export const MIN_KEY = -Infinity;
export const MAX_KEY: IndexableType = [[]];

/** Interest helpers: some keys, a key range, or a whole table. */
export const keysOf = (...keys: IndexableType[]): RangeSet => new RangeSet().addKeys(keys);
export const rangeOf = (from: IndexableType, to: IndexableType): RangeSet => new RangeSet(from, to);
export const wholeTable = (): RangeSet => new RangeSet(MIN_KEY, MAX_KEY);

export interface StorageChanges {
  /**
   * Calls `changed` after every committed write to `dbName` that may touch `interest`; returns the stop. It is
   * called in the committing transaction's completion handler: a Dexie query it starts must leave that
   * transaction's zone (Dexie.ignoreTransaction), as readLocal does.
   * `early` listeners are told before the others (caches forget before watches read again).
   */
  watch(interest: Interest, changed: () => void, early?: boolean): () => void;
  dispose(): void;
}

/**
 * @example const changes = createStorageChanges('shop-lookup'); const stop = changes.watch({ coupons: keysOf('A') },
 * reread);
 */
export function createStorageChanges(dbName: string): StorageChanges {
  type Watcher = { parts: [string, RangeSet][]; changed: () => void };
  const early = new Set<Watcher>();
  const watchers = new Set<Watcher>();
  const onMutated = (mutated: ObservabilitySet) => {
    const all = (mutated as { all?: boolean }).all === true;
    const touched = (w: Watcher) =>
      all || w.parts.some(([part, mine]) => mutated[part] !== undefined && rangesOverlap(mutated[part], mine));
    for (const w of [...early, ...watchers]) if (touched(w)) w.changed();
  };
  Dexie.on('storagemutated', onMutated);
  return {
    watch(interest, changed, first = false) {
      // the primary-key part of each table (index parts would miss a record whose indexed value moved away)
      const w = {
        parts: Object.entries(interest).map(([table, keys]): [string, RangeSet] => [`idb://${dbName}/${table}/`, keys]),
        changed,
      };
      const set = first ? early : watchers;
      set.add(w);
      return () => set.delete(w);
    },
    dispose() {
      Dexie.on.storagemutated.unsubscribe(onMutated);
      early.clear();
      watchers.clear();
    },
  };
}
