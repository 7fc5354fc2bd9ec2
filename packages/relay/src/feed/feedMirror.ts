// This instance's copy of the feed: the head, and every record while the shop is held in memory, caught up from the
// store whenever any instance commits (onHeadChange). Held, the feed's snapshot chunks and the API-shaped list answers
// come from here, so they keep working (degraded) while the store is unreachable; not held (a hub's shop beyond its
// memory budget), only the head is kept and they are read straight from the store (readChunk), in the same order.
import type { FeedHead, FeedRecord, RelayStore, ResourceId } from '../store/relayStore';

const CHUNK = 5_000;
const SEP = '\u0000';

/** How a hub keeps its shops' records within its memory budget (relay/hub/recordBudget.ts); every hook is optional. */
export interface MirrorHolding {
  /** Start without the records in memory (default: load them, as a single-shop relay does). */
  lean?: boolean;
  /** A lean mirror answered from the store what memory would have (a snapshot read to its end, a list answer). */
  asked?(mirror: FeedMirror): void;
  /** The records held now (0: none): after loading them, after changes, after letting them go or closing. */
  held?(size: number, mirror: FeedMirror): void;
  /** An answer came from the records in memory. */
  used?(mirror: FeedMirror): void;
}

export interface FeedMirror {
  /** null until the first load from the store succeeded. */
  head(): FeedHead | null;
  products(): number[];
  /** Records of one resource, in key order (options: by number). Held: cached until the next change. */
  list(resource: ResourceId): Promise<unknown[]>;
  /** Snapshot records after `after` (a `resource\0key` position; null: from the start), in order. */
  chunk(after: string | null, limit: number): Promise<{ records: FeedRecord[]; last: string | null; done: boolean }>;
  /** Whether the records are in memory (answers from here, not from the store). */
  holds(): boolean;
  /** How many records are in memory. */
  size(): number;
  /** Loads the records into memory (with the next catch-up); resolves when they are, or the load failed. */
  hold(): Promise<void>;
  /** Lets the records go: answers come from the store again. */
  release(): void;
  /** Catches up with the store now (one at a time); resolves when done, never throws. */
  catchUp(): Promise<void>;
  /** Why the store could not be read at the last try, or null. */
  error(): string | null;
  /** Called after the head or the tracked products changed. */
  onChange(listener: () => void): () => void;
  close(): void;
}

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Every record of `resource` read from the store in key order (a lean mirror's list answer). */
async function readList(store: RelayStore, resource: ResourceId, handle: string | undefined): Promise<unknown[]> {
  const out: unknown[] = [];
  // `resource` alone sorts before its first position (`resource\0…`) and after every earlier resource's
  for (let after: string | null = resource; ; ) {
    const chunk = await store.readChunk!(after, CHUNK);
    if (chunk.handle !== handle)
      throw new Error(`it holds another feed history (${chunk.handle}) than this relay's (${handle})`);
    for (const r of chunk.records) {
      if (r.resource !== resource) return out;
      out.push(r.record);
    }
    if (chunk.done || chunk.records.length === 0) return out;
    after = chunk.last;
  }
}

const sizeOf = (records: Map<ResourceId, Map<string, unknown>> | null): number => {
  let n = 0;
  for (const map of records?.values() ?? []) n += map.size;
  return n;
};

/** @example const mirror = createFeedMirror(store); await mirror.catchUp(); mirror.head()?.version */
export function createFeedMirror(store: RelayStore, holding: MirrorHolding = {}): FeedMirror {
  let head: FeedHead | null = null;
  let products: number[] = [];
  // null: not held (lean): snapshot chunks and lists are read from the store; a store without readChunk always holds
  let records: Map<ResourceId, Map<string, unknown>> | null = null;
  let wanted = holding.lean !== true || store.readChunk === undefined;
  let generation = 0; // moves on release(): a load under way then keeps nothing
  let holdDone: Promise<void> | null = null;
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
    if (!records) return;
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
    const at = generation;
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
    if (at !== generation) return latest; // let go meanwhile: stay lean
    records = fresh;
    // commits during the scan: their changes after the head we started from (upserts and deletes are idempotent)
    return (await applyChangesSince(latest.version, latest)) ?? latest;
  }

  async function once(): Promise<void> {
    const [latest, tracked] = await Promise.all([store.head(), store.trackedProducts()]);
    let next: FeedHead;
    const before = records;
    const sizeBefore = sizeOf(records);
    if (!wanted) {
      records = null; // lean: the head is all this instance keeps
      next = latest;
    } else if (!records || !head || head.handle !== latest.handle || latest.version < head.version)
      next = await load(latest);
    else if (latest.version > head.version)
      next = (await applyChangesSince(head.version, latest)) ?? (await load(latest));
    else next = latest;
    if (records !== before) {
      order = null;
      lists.clear();
    }
    const size = sizeOf(records);
    if (records !== before || size !== sizeBefore) holding.held?.(size, self);
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

  const self: FeedMirror = {
    head: () => head,
    products: () => products,
    async list(resource) {
      if (!records) {
        const list = await readList(store, resource, head?.handle).catch((error: unknown) => {
          void catchUp(); // (another history: the head follows the store's)
          throw error;
        });
        holding.asked?.(self);
        return list;
      }
      holding.used?.(self);
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
    async chunk(after, limit) {
      if (!records) {
        const chunk = await store.readChunk!(after, limit);
        if (chunk.handle !== head?.handle) {
          // the store lost its history (a flushed Redis) since this head: its records are not this feed's
          void catchUp();
          throw new Error(
            `it holds another feed history (${chunk.handle}) than this relay's (${head?.handle ?? 'none'}); catching up`,
          );
        }
        if (chunk.done) holding.asked?.(self); // a till read the snapshot to its end from the store
        return { records: chunk.records, last: chunk.last, done: chunk.done };
      }
      holding.used?.(self);
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
        return { resource, key, record: records!.get(resource)!.get(key) };
      });
      return { records: out, last: slice.at(-1) ?? after, done: lo + slice.length >= order.length };
    },
    holds: () => records !== null,
    size: () => sizeOf(records),
    hold() {
      if (records) return Promise.resolve();
      if (!holdDone) {
        wanted = true;
        holdDone = catchUp().finally(() => (holdDone = null));
      }
      return holdDone;
    },
    release() {
      if (store.readChunk === undefined || (!records && !wanted)) return;
      wanted = false;
      generation++;
      records = null;
      order = null;
      lists.clear();
      holding.held?.(0, self);
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
      if (records) {
        generation++;
        records = null;
        holding.held?.(0, self);
      }
    },
  };
  return self;
}
