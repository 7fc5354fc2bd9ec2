// The feed in this process's memory: the head (handle, version, oldest, confirmedAt), the snapshot as per-resource
// maps of records and their hashes with a sorted key index for stable chunks (rebuilt after a commit), the change
// log trimmed to `maxChanges`, commitListing under the lease, and the listeners told each new head (as redisFeed.ts
// keeps them in Redis and publishes the head).
import { randomBytes } from 'node:crypto';
import type { FeedChange, FeedHead, FeedRecord, ListingCommit, ResourceId, SnapshotChunk } from '../relayStore';
import type { MemoryLeases } from './memoryLease';

/** One record of the snapshot, with the hash the next listing is diffed against. */
interface Entry {
  record: unknown;
  hash: string;
}

export interface MemoryFeedDeps {
  now: () => number;
  /** Change-log entries kept; a till further behind starts again from a snapshot. */
  maxChanges: number;
  leases: MemoryLeases;
}

const SEP = '\u0000';

/** @example const feed = memoryFeed({ now, maxChanges: 100_000, leases }); await feed.head(); */
export function memoryFeed({ now, maxChanges, leases }: MemoryFeedDeps) {
  const handle = `m${now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const snapshot = new Map<ResourceId, Map<string, Entry>>();
  let sortedKeys: string[] | null = null; // `resource\0key`, sorted: snapshot cursors; rebuilt after a commit
  let log: FeedChange[] = [];
  let version = 0;
  let oldest = 0;
  const confirmedAt: FeedHead['confirmedAt'] = {};
  const headListeners = new Set<(head: FeedHead) => void>();

  const currentHead = (): FeedHead => ({ handle, version, oldest, confirmedAt: { ...confirmedAt } });
  const clone = <T>(value: T): T => structuredClone(value);

  /** Sets one record (one frozen copy, shared by the snapshot, the log and every reader) and logs the upsert. */
  function put(resource: ResourceId, key: string, value: unknown, hash: string): void {
    let records = snapshot.get(resource);
    if (!records) snapshot.set(resource, (records = new Map()));
    if (!records.has(key)) sortedKeys = null;
    const record = Object.freeze(clone(value));
    records.set(key, { record, hash });
    log.push(Object.freeze({ version: ++version, resource, key, op: 'upsert', record }));
  }

  /** Deletes one record, if held, and logs the delete. */
  function remove(resource: ResourceId, key: string): boolean {
    if (!snapshot.get(resource)?.delete(key)) return false;
    sortedKeys = null;
    log.push(Object.freeze({ version: ++version, resource, key, op: 'delete' as const }));
    return true;
  }

  /** After a commit's changes: the log trimmed to maxChanges, the new head told to every listener. */
  function committed(): FeedHead {
    if (log.length > maxChanges) {
      log = log.slice(log.length - maxChanges);
      oldest = log[0]!.version - 1;
    }
    const head = currentHead();
    for (const listener of [...headListeners]) listener(head);
    return head;
  }

  function keysInOrder(): string[] {
    if (sortedKeys) return sortedKeys;
    const keys: string[] = [];
    for (const [resource, records] of snapshot) for (const key of records.keys()) keys.push(resource + SEP + key);
    sortedKeys = keys.sort();
    return sortedKeys;
  }

  /** Snapshot records after the position `after` (`resource\0key`; null: from the start), in position order. */
  function recordsAfter(
    after: string | null,
    limit: number,
  ): { records: FeedRecord[]; last: string | null; done: boolean } {
    const keys = keysInOrder();
    let start = 0;
    if (after !== null) {
      let lo = 0;
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (keys[mid]! <= after) lo = mid + 1;
        else hi = mid;
      }
      start = lo;
    }
    const slice = keys.slice(start, start + Math.max(1, limit));
    const records: FeedRecord[] = slice.map((k) => {
      const at = k.indexOf(SEP);
      const resource = k.slice(0, at) as ResourceId;
      const key = k.slice(at + 1);
      return { resource, key, record: snapshot.get(resource)!.get(key)!.record };
    });
    return { records, last: slice.at(-1) ?? after, done: start + slice.length >= keys.length };
  }

  return {
    /** What the uses (memoryUses.ts) write through: the records of a resource, a put, a remove, a commit. */
    writes: {
      records: (resource: ResourceId): ReadonlyMap<string, Entry> | undefined => snapshot.get(resource),
      put,
      remove,
      committed,
      currentHead,
    },

    async head(): Promise<FeedHead> {
      return currentHead();
    },

    async readSnapshot(cursor: string | null, limit: number): Promise<{ records: FeedRecord[]; next: string | null }> {
      // the cursor is the last position handed out: records that stay in the snapshot are never skipped
      const chunk = recordsAfter(cursor, limit);
      return { records: chunk.records, next: chunk.done ? null : chunk.last };
    },

    async readChunk(after: string | null, limit: number): Promise<SnapshotChunk> {
      return { ...recordsAfter(after, limit), handle };
    },

    async readChanges(since: number, limit: number): Promise<FeedChange[] | null> {
      if (since < oldest) return null;
      // log versions are dense and ascending: the first change after `since` is found by arithmetic
      const first = log.length === 0 ? 0 : Math.max(0, since + 1 - log[0]!.version);
      return log.slice(first, first + Math.max(1, limit));
    },

    async readHashes(resource: ResourceId): Promise<Map<string, string>> {
      return new Map([...(snapshot.get(resource) ?? new Map<string, Entry>())].map(([k, e]) => [k, e.hash]));
    },

    async readRecord(resource: ResourceId, key: string): Promise<unknown> {
      const entry = snapshot.get(resource)?.get(key);
      return entry ? entry.record : null;
    },

    async commitListing(commit: ListingCommit): Promise<FeedHead> {
      leases.check(commit.lease);
      for (const up of commit.upserts) put(commit.resource, up.key, up.record, up.hash);
      for (const key of commit.deletes) remove(commit.resource, key);
      confirmedAt[commit.resource] = commit.confirmedAt;
      return committed();
    },

    onHeadChange(listener: (head: FeedHead) => void): () => void {
      headListeners.add(listener);
      return () => headListeners.delete(listener);
    },

    close(): void {
      headListeners.clear();
    },
  };
}
