// The embedded RelayStore: everything in this process's memory. Right for one relay instance; its history (handle)
// is new on every start, so tills start again from a snapshot after a restart, and the uses tills reported are lost
// with the process. Same contract as the Redis store.
import { randomBytes } from 'node:crypto';
import { createRateLimiter, type RateLimiter } from '@shop-lookup/shop-api';
import { tooManyProducts } from './tooManyProducts';
import { KEPT_BYTES_PER_SHOP } from './keptBytesPerShop';
import { dropFrom } from './useDrops';
import { heardAt, type TillHeard } from './tillHeard';
import type { UsesRecord } from '@shop-lookup/shop-api';
import { mergeUses, newestReceived, strikesOf, type TillCounts } from './useRecords';
import type {
  FeedChange,
  FeedHead,
  FeedRecord,
  Lease,
  ListingCheckpoint,
  RelayStore,
  ResourceId,
  StagedRecord,
  StoreHealth,
} from './relayStore';

export interface MemoryStoreOptions {
  /** Clock (ms), injectable for lease tests. @example { now: () => fakeNow } */
  now?: () => number;
  /**
   * Change-log entries kept; a till further behind starts again from a snapshot. Default 100,000.
   * @example { maxChanges: 10 }
   */
  maxChanges?: number;
  /**
   * Compressed snapshot chunks kept at most, bytes (the oldest kept go first). Default KEPT_BYTES_PER_SHOP (16 MiB).
   * @example { maxKeptBytes: 1_000_000 }
   */
  maxKeptBytes?: number;
}

interface Entry {
  record: unknown;
  hash: string;
}

const SEP = '\u0000';

/** @example const store = createMemoryStore(); const head = await store.head(); */
export function createMemoryStore(options: MemoryStoreOptions = {}): RelayStore {
  const now = options.now ?? (() => Date.now());
  const maxChanges = options.maxChanges ?? 100_000;
  // compressed chunks kept for the instances sharing this store, at most (the oldest kept go first)
  const maxKeptBytes = options.maxKeptBytes ?? KEPT_BYTES_PER_SHOP;
  const cursorKey = randomBytes(32);
  const handle = `m${now().toString(36)}-${randomBytes(4).toString('hex')}`;

  const snapshot = new Map<ResourceId, Map<string, Entry>>();
  let sortedKeys: string[] | null = null; // `resource\0key`, sorted: snapshot cursors; rebuilt after a commit
  let log: FeedChange[] = [];
  let version = 0;
  let oldest = 0;
  const confirmedAt: FeedHead['confirmedAt'] = {};

  const checkpoints = new Map<ResourceId, ListingCheckpoint>();
  const staged = new Map<ResourceId, Map<string, StagedRecord>>();
  const tracked = new Map<number, number>(); // product → when a client last asked for it
  const leases = new Map<string, Lease>();
  let fencing = 0;
  let token: string | null = null;
  let limiter: RateLimiter | null = null;
  const headListeners = new Set<(head: FeedHead) => void>();
  const keptBodies = new Map<string, { digest: string; bytes: Buffer }>(); // in the order they were kept
  let keptBytes = 0;
  const health: StoreHealth = { ok: true, error: null, since: now() };

  const currentHead = (): FeedHead => ({ handle, version, oldest, confirmedAt: { ...confirmedAt } });
  const clone = <T>(value: T): T => structuredClone(value);

  function holds(lease: Lease): boolean {
    const current = leases.get(lease.name);
    // past its expiry a lease is lost even if nobody took it yet (as a Redis key with a TTL would be gone)
    return (
      current !== undefined &&
      current.token === lease.token &&
      current.owner === lease.owner &&
      current.expiresAt > now()
    );
  }

  function leaseLost(lease: Lease): Error {
    return Object.assign(new Error(`The lease "${lease.name}" (token ${lease.token}) is no longer held.`), {
      code: 'lease_lost',
    });
  }

  let usesKept = 0; // uses held by the `uses` records
  const tillCounts = new Map<string, TillCounts>(); // each till's uses held and strikes
  const tillHeard = new Map<string, TillHeard>(); // when the relay last heard from each till
  const unchecked = new Map<string, number>(); // codes not seen in an API answer → when first recorded

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

  const usesRecord = (code: string) => (snapshot.get('uses')?.get(code)?.record as UsesRecord | undefined) ?? null;

  function codesExpiredBefore(at: number): string[] {
    const expired: string[] = [];
    for (const [code, entry] of snapshot.get('uses') ?? [])
      if (newestReceived(entry.record as UsesRecord) < at) expired.push(code);
    return expired;
  }

  /** Writes one code's record after a change (null: it goes). */
  function writeUses(code: string, record: UsesRecord | null): void {
    if (record) put('uses', code, record, '');
    else {
      remove('uses', code);
      unchecked.delete(code);
    }
  }

  /** Drops the whole records of the codes expired before `at` (retention); returns the codes and uses dropped. */
  function dropExpired(at: number): { codes: string[]; uses: number } {
    const codes = codesExpiredBefore(at);
    let uses = 0;
    for (const code of codes) {
      const { uses: n } = dropFrom(usesRecord(code)!, { why: 'expired' }, tillCounts, at, at);
      writeUses(code, null);
      uses += n;
    }
    usesKept -= uses;
    return { codes, uses };
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
    kind: 'memory',

    async head() {
      return currentHead();
    },

    async readSnapshot(cursor, limit) {
      // the cursor is the last position handed out: records that stay in the snapshot are never skipped
      const chunk = recordsAfter(cursor, limit);
      return { records: chunk.records, next: chunk.done ? null : chunk.last };
    },

    async readChunk(after, limit) {
      return { ...recordsAfter(after, limit), handle };
    },

    async readChanges(since, limit) {
      if (since < oldest) return null;
      // log versions are dense and ascending: the first change after `since` is found by arithmetic
      const first = log.length === 0 ? 0 : Math.max(0, since + 1 - log[0]!.version);
      return log.slice(first, first + Math.max(1, limit));
    },

    async readHashes(resource) {
      return new Map([...(snapshot.get(resource) ?? new Map<string, Entry>())].map(([k, e]) => [k, e.hash]));
    },

    async readRecord(resource, key) {
      const entry = snapshot.get(resource)?.get(key);
      return entry ? entry.record : null;
    },

    async commitListing(commit) {
      if (!holds(commit.lease)) throw leaseLost(commit.lease);
      for (const up of commit.upserts) put(commit.resource, up.key, up.record, up.hash);
      for (const key of commit.deletes) remove(commit.resource, key);
      confirmedAt[commit.resource] = commit.confirmedAt;
      return committed();
    },

    async commitUses(commit) {
      const touched = new Map<string, UsesRecord | null>();
      const load = () => {
        touched.clear();
        for (const batch of commit.batches) {
          for (const use of batch.uses) touched.set(use.code, usesRecord(use.code));
          for (const release of batch.releases ?? []) touched.set(release.code, usesRecord(release.code));
        }
      };
      load();
      const asked = commit.batches.reduce((n, b) => n + b.uses.length, 0);
      // near the cap: the expired codes go first
      let changed = false;
      if (usesKept + asked > commit.max && dropExpired(commit.expiredBefore).codes.length > 0) {
        changed = true;
        load();
      }
      const heard = new Map(commit.batches.map((b) => [b.till, tillHeard.get(b.till) ?? null]));
      const merged = mergeUses(touched, commit, usesKept, tillCounts, heard);
      for (const [till, h] of heard) if (h) tillHeard.set(till, h);
      for (const code of merged.changed) writeUses(code, touched.get(code) ?? null);
      const known = new Set(commit.known ?? []);
      for (const code of merged.created) {
        const record = touched.get(code);
        if (record && !known.has(code)) unchecked.set(code, newestReceived(record));
      }
      usesKept = merged.kept;
      const head = changed || merged.changed.size > 0 ? committed() : currentHead();
      return { outcomes: merged.outcomes, head, counts: merged.counts };
    },

    async dropUses(drop) {
      const at = drop.at ?? now();
      const expiredBefore = drop.expiredBefore;
      const expired = expiredBefore === undefined ? { codes: [], uses: 0 } : dropExpired(expiredBefore);
      const dropped = [...expired.codes];
      let uses = expired.uses;
      const codes = drop.codes?.length
        ? [...new Set(drop.codes)]
        : drop.till !== undefined
          ? [...(snapshot.get('uses')?.keys() ?? [])]
          : [];
      for (const code of codes) {
        const record = usesRecord(code);
        if (!record) continue;
        const from = drop.strikesFrom ?? expiredBefore ?? Number.NEGATIVE_INFINITY;
        const { next, uses: n } = dropFrom(record, drop, tillCounts, at, from);
        if (next === undefined) continue;
        writeUses(code, next);
        dropped.push(code);
        uses += n;
      }
      usesKept -= uses;
      if (expiredBefore !== undefined) {
        // the sweep: tills not heard from within retention, and holding nothing, are forgotten
        for (const [till, h] of tillHeard) if (h.heard < expiredBefore) tillHeard.delete(till);
        for (const [till, c] of tillCounts)
          if (c.held === 0 && strikesOf(c, expiredBefore) === 0) tillCounts.delete(till);
      }
      return { dropped, uses, head: dropped.length > 0 ? committed() : currentHead() };
    },

    async hearTill(till, at) {
      tillHeard.set(till, heardAt(tillHeard.get(till), at));
    },

    async uncheckedUses(before, limit) {
      return [...unchecked]
        .filter(([, at]) => at < before)
        .sort((a, b) => a[1] - b[1])
        .slice(0, limit)
        .map(([code]) => code);
    },

    async checkedUses(codes) {
      for (const code of codes) unchecked.delete(code);
    },

    async listUses({ till, codes, limit }) {
      const out: UsesRecord[] = [];
      for (const code of codes ?? [...(snapshot.get('uses')?.keys() ?? [])]) {
        if (out.length >= limit) break;
        const record = usesRecord(code);
        const uses = record?.uses.filter((u) => till === undefined || u.till === till) ?? [];
        if (record && uses.length > 0) out.push(clone({ ...record, uses }));
      }
      return out;
    },

    async readCheckpoint(resource) {
      const checkpoint = checkpoints.get(resource);
      return checkpoint ? { ...checkpoint } : null;
    },

    async stagePage(checkpoint, records, lease) {
      if (!holds(lease)) throw leaseLost(lease);
      const previous = checkpoints.get(checkpoint.resource);
      let pages = staged.get(checkpoint.resource);
      if (!pages || previous?.listing !== checkpoint.listing) staged.set(checkpoint.resource, (pages = new Map()));
      for (const r of records) pages.set(r.key, clone(r));
      checkpoints.set(checkpoint.resource, { ...checkpoint });
    },

    async readStaged(resource) {
      return new Map([...(staged.get(resource) ?? [])].map(([k, r]) => [k, clone(r)]));
    },

    async discardListing(resource) {
      checkpoints.delete(resource);
      staged.delete(resource);
    },

    async trackedProducts() {
      return [...tracked.keys()].sort((a, b) => a - b);
    },

    async trackProducts(productNos, { at = now(), max } = {}) {
      const fresh = [...new Set(productNos)].filter((no) => !tracked.has(no));
      if (max !== undefined && fresh.length > 0 && tracked.size + fresh.length > max) {
        for (const no of productNos) if (tracked.has(no)) tracked.set(no, Math.max(tracked.get(no)!, at));
        throw tooManyProducts(max, tracked.size);
      }
      for (const no of productNos) tracked.set(no, Math.max(tracked.get(no) ?? at, at));
      return fresh;
    },

    async dropProductsAskedBefore(at, keep) {
      const dropped = [...tracked].filter(([no, asked]) => asked < at && !keep.includes(no)).map(([no]) => no);
      for (const no of dropped) tracked.delete(no);
      return dropped.sort((a, b) => a - b);
    },

    async acquireLease(name, owner, ttlMs) {
      const current = leases.get(name);
      const t = now();
      if (current && current.expiresAt > t && current.owner !== owner) return null;
      const keep = current && current.owner === owner && current.expiresAt > t;
      const lease: Lease = { name, owner, token: keep ? current.token : ++fencing, expiresAt: t + ttlMs };
      leases.set(name, lease);
      return { ...lease };
    },

    async renewLease(lease, ttlMs) {
      if (!holds(lease)) return null;
      const renewed = { ...lease, expiresAt: now() + ttlMs };
      leases.set(lease.name, renewed);
      return { ...renewed };
    },

    async releaseLease(lease) {
      if (holds(lease)) leases.delete(lease.name);
    },

    async readToken() {
      return token;
    },

    async writeToken(value) {
      token = value;
    },

    async dropToken(value) {
      if (token === value) token = null;
    },

    rateLimiter(limits) {
      // every user of this store is in this process: one limiter is the shared one. Its margin is the Redis one's
      // (redisRateLimiter.ts): a relay busy with many clients sends a granted request tens of ms late, and the API
      // counts arrival times (at the engine's 50 ms a relay flooded by 20 clients drew 429s)
      limiter ??= createRateLimiter(limits === false ? false : limits, { marginMs: 200 });
      return limiter;
    },

    onHeadChange(listener) {
      headListeners.add(listener);
      return () => headListeners.delete(listener);
    },

    async readKeptBody(slot, digest) {
      const kept = keptBodies.get(slot);
      return kept && kept.digest === digest ? kept.bytes : null;
    },

    async keepBody(slot, digest, bytes) {
      const before = keptBodies.get(slot);
      if (before) keptBytes -= before.bytes.length;
      keptBodies.delete(slot);
      if (bytes.length > maxKeptBytes) return;
      keptBodies.set(slot, { digest, bytes });
      keptBytes += bytes.length;
      for (const [oldest, kept] of keptBodies) {
        if (keptBytes <= maxKeptBytes) break;
        keptBodies.delete(oldest);
        keptBytes -= kept.bytes.length;
      }
    },

    async cursorKey() {
      return cursorKey;
    },

    health() {
      return { ...health };
    },

    onHealthChange() {
      return () => {};
    },

    async close() {
      headListeners.clear();
      limiter?.dispose();
      limiter = null;
    },
  };
}
