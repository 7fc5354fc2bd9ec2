// The embedded RelayStore: everything in this process's memory. Right for one relay instance; its history (handle)
// is new on every start, so tills start again from a snapshot after a restart, and the uses tills reported are lost
// with the process. Same contract as the Redis store, and the same parts, file by file: the feed (memoryFeed.ts),
// the uses (memoryUses.ts), the lease (memoryLease.ts), the listing (memoryListing.ts), the kept chunks
// (memoryKeptBodies.ts); the tracked products, the token and the rate limiter are here, as in redisStore.ts.
import { randomBytes } from 'node:crypto';
import { createRateLimiter, type RateLimiter } from '@shop-lookup/shop-api';
import { STORE_DEFAULTS } from '../../defaults';
import { tooManyProducts } from '../tooManyProducts';
import type { RelayStore, StoreHealth } from '../relayStore';
import { memoryFeed } from './memoryFeed';
import { memoryKeptBodies } from './memoryKeptBodies';
import { memoryLeases } from './memoryLease';
import { memoryListing } from './memoryListing';
import { memoryUses } from './memoryUses';

export interface MemoryStoreOptions {
  /** Clock (ms), injectable for lease tests. @example { now: () => fakeNow } */
  now?: () => number;
  /**
   * Change-log entries kept; a till further behind starts again from a snapshot. Default 100,000.
   * @example { maxChanges: 10 }
   */
  maxChanges?: number;
  /**
   * Compressed snapshot chunks kept at most, bytes (the oldest kept go first). Default STORE_DEFAULTS.maxKeptBytes (16 MiB).
   * @example { maxKeptBytes: 1_000_000 }
   */
  maxKeptBytes?: number;
}

/** @example const store = createMemoryStore(); const head = await store.head(); */
export function createMemoryStore(options: MemoryStoreOptions = {}): RelayStore {
  const now = options.now ?? (() => Date.now());
  const maxChanges = options.maxChanges ?? STORE_DEFAULTS.maxChanges;
  // compressed chunks kept for the instances sharing this store, at most (the oldest kept go first)
  const kept = memoryKeptBodies(options.maxKeptBytes ?? STORE_DEFAULTS.maxKeptBytes);
  const cursorKey = randomBytes(32);
  const leases = memoryLeases(now);
  const feed = memoryFeed({ now, maxChanges, leases });
  const uses = memoryUses({ now, feed: feed.writes });
  const listing = memoryListing(leases);

  const tracked = new Map<number, number>(); // product → when a client last asked for it
  let token: string | null = null;
  let limiter: RateLimiter | null = null;
  const health: StoreHealth = { ok: true, error: null, since: now() };

  return {
    kind: 'memory',
    head: feed.head,
    readSnapshot: feed.readSnapshot,
    readChunk: feed.readChunk,
    readChanges: feed.readChanges,
    readHashes: feed.readHashes,
    readRecord: feed.readRecord,
    commitListing: feed.commitListing,
    ...uses,
    readCheckpoint: listing.readCheckpoint,
    stagePage: listing.stagePage,
    readStaged: listing.readStaged,
    discardListing: listing.discardListing,

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

    acquireLease: leases.acquire,
    renewLease: leases.renew,
    releaseLease: leases.release,

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

    onHeadChange: feed.onHeadChange,
    readKeptBody: kept.readKeptBody,
    keepBody: kept.keepBody,

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
      feed.close();
      limiter?.dispose();
      limiter = null;
    },
  };
}
