// This instance's copy of the feed: the head and every record, caught up from the store whenever any instance
// commits (onHeadChange). The feed's snapshots, its 304s and long-polls, and the API-shaped list answers are served
// from here, so they keep working (degraded) while the store is unreachable.
import type { FeedHead, FeedRecord, RelayStore, ResourceId } from '../store/relayStore';

const CHUNK = 5_000;
const SEP = '\u0000';

export interface FeedMirror {
  /** null until the first load from the store succeeded. */
  head(): FeedHead | null;
  products(): number[];
  /** Records of one resource, in key order (options: by number). Cached until the next change. */
  list(resource: ResourceId): unknown[];
  /** Snapshot records after `after` (a `resource\0key` position; null: from the start), in order. */
  chunk(after: string | null, limit: number): { records: FeedRecord[]; last: string | null; done: boolean };
  /** Catches up with the store now (one at a time); resolves when done, never throws. */
  catchUp(): Promise<void>;
  /** Why the store could not be read at the last try, or null. */
  error(): string | null;
  /** Called after the head or the tracked products changed. */
  onChange(listener: () => void): () => void;
  close(): void;
}

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** @example const mirror = createFeedMirror(store); await mirror.catchUp(); mirror.head()?.version */
export function createFeedMirror(store: RelayStore): FeedMirror {
  let head: FeedHead | null = null;
  let products: number[] = [];
  let records = new Map<ResourceId, Map<string, unknown>>();
  let order: string[] | null = null; // `resource\0key`, sorted: snapshot positions
  const lists = new Map<ResourceId, unknown[]>();
  let error: string | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  const listeners = new Set<() => void>();

  function changed(): void {
    order = null;
    lists.clear();
  }

  function apply(resource: ResourceId, key: string, record: unknown | undefined): void {
    let map = records.get(resource);
    if (!map) records.set(resource, (map = new Map()));
    if (record === undefined) map.delete(key);
    else map.set(key, record);
  }

  async function applyChangesSince(version: number, into: FeedHead): Promise<FeedHead | null> {
    let at = version;
    for (;;) {
      const changes = await store.readChanges(at, CHUNK);
      if (changes === null) return null; // too far behind: load a whole snapshot
      for (const c of changes) apply(c.resource, c.key, c.op === 'upsert' ? c.record : undefined);
      if (changes.length > 0) at = changes[changes.length - 1]!.version;
      if (changes.length < CHUNK) return { ...into, version: Math.max(at, into.version) };
    }
  }

  async function load(latest: FeedHead): Promise<FeedHead> {
    const fresh = new Map<ResourceId, Map<string, unknown>>();
    for (let cursor: string | null = null, first = true; first || cursor !== null; first = false) {
      const chunk = await store.readSnapshot(cursor, CHUNK);
      for (const r of chunk.records) {
        let map = fresh.get(r.resource);
        if (!map) fresh.set(r.resource, (map = new Map()));
        map.set(r.key, r.record);
      }
      cursor = chunk.next;
    }
    records = fresh;
    // commits during the scan: their changes after the head we started from (upserts and deletes are idempotent)
    return (await applyChangesSince(latest.version, latest)) ?? latest;
  }

  async function once(): Promise<void> {
    const [latest, tracked] = await Promise.all([store.head(), store.trackedProducts()]);
    let next: FeedHead;
    if (!head || head.handle !== latest.handle || latest.version < head.version) next = await load(latest);
    else if (latest.version > head.version) next = (await applyChangesSince(head.version, latest)) ?? (await load(latest));
    else next = latest;
    const moved =
      !head ||
      next.handle !== head.handle ||
      next.version !== head.version ||
      JSON.stringify(next.confirmedAt) !== JSON.stringify(head.confirmedAt) ||
      tracked.join() !== products.join();
    if (!head || next.version !== head.version || next.handle !== head.handle) changed();
    head = { ...next, version: Math.max(next.version, latest.version) };
    products = tracked;
    error = null;
    if (moved) for (const listener of [...listeners]) listener();
  }

  function catchUp(): Promise<void> {
    if (running) {
      again = true; // a change arrived while reading: read once more after this
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await once();
        } catch (e) {
          error = `the relay store (${store.kind}) could not be read: ${describe(e)}`;
        }
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  }

  const off = store.onHeadChange(() => void catchUp());

  return {
    head: () => head,
    products: () => products,
    list(resource) {
      let list = lists.get(resource);
      if (!list) {
        const map = records.get(resource) ?? new Map<string, unknown>();
        const keys = [...map.keys()];
        if (resource === 'coupons') keys.sort();
        else keys.sort((a, b) => Number(a) - Number(b));
        list = keys.map((k) => map.get(k));
        lists.set(resource, list);
      }
      return list;
    },
    chunk(after, limit) {
      if (!order) {
        order = [];
        for (const [resource, map] of records) for (const key of map.keys()) order.push(resource + SEP + key);
        order.sort();
      }
      let lo = 0;
      let hi = order.length;
      if (after !== null) {
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (order[mid]! <= after) lo = mid + 1;
          else hi = mid;
        }
      }
      const slice = order.slice(lo, lo + limit);
      const out: FeedRecord[] = slice.map((pos) => {
        const at = pos.indexOf(SEP);
        const resource = pos.slice(0, at) as ResourceId;
        const key = pos.slice(at + 1);
        return { resource, key, record: records.get(resource)!.get(key) };
      });
      return { records: out, last: slice.at(-1) ?? after, done: lo + slice.length >= order.length };
    },
    catchUp,
    error: () => error,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      off();
      listeners.clear();
    },
  };
}
