// The sync lease over Redis: `SET lease owner NX PX ttl` semantics plus a fencing counter that grows with every new
// holder, and `underLease`, which applies a write in MULTI/EXEC only while the lease is still the writer's (WATCH on
// the lease and fencing keys: a holder that lost its lease, even mid-transaction, gets its EXEC refused).
import { WatchError } from 'redis';
import type { RedisClient, RedisConnection } from './redisConnection';
import type { RedisKeys } from './redisKeys';
import type { Lease } from './relayStore';

type Multi = ReturnType<RedisClient['multi']>;

const ATTEMPTS = 10;

/** True while `lease` is the current one: nobody took over since (fence unchanged), and no other owner holds it. */
async function stillHeld(tx: RedisClient, keys: RedisKeys, lease: Lease): Promise<boolean> {
  const [holder, fence] = (await tx.mGet([keys.lease(lease.name), keys.fence(lease.name)])) as (string | null)[];
  return (holder === lease.owner || holder === null) && Number(fence) === lease.token;
}

/**
 * Runs `prepare` (reads) and then `write` (queued into one MULTI) while `lease` is still current; retries when a
 * watched key changed meanwhile. Resolves to the EXEC replies and what `write` returned, or null when the lease
 * was lost.
 * @example const replies = await underLease(conn, keys, lease, [], async () => null, (m) => m.set(k, v));
 */
export async function underLease<T, R>(
  conn: RedisConnection,
  keys: RedisKeys,
  lease: Lease,
  watch: string[],
  prepare: (tx: RedisClient) => Promise<T>,
  write: (multi: Multi, prepared: T) => R,
): Promise<{ replies: unknown[]; written: R } | null> {
  return conn.transaction(async (tx) => {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      await tx.watch([keys.lease(lease.name), keys.fence(lease.name), ...watch]);
      if (!(await stillHeld(tx, keys, lease))) {
        await tx.unwatch();
        return null;
      }
      const prepared = await prepare(tx);
      const multi = tx.multi();
      const written = write(multi, prepared);
      try {
        return { replies: (await multi.exec()) as unknown[], written };
      } catch (error) {
        if (!(error instanceof WatchError)) throw error;
      }
    }
    throw new Error(`lease ${lease.name}: ${ATTEMPTS} transactions in a row were interrupted by other writers`);
  });
}

export interface RedisLeases {
  acquire(name: string, owner: string, ttlMs: number): Promise<Lease | null>;
  renew(lease: Lease, ttlMs: number): Promise<Lease | null>;
  release(lease: Lease): Promise<void>;
}

/** @example const leases = redisLeases(conn, keys, Date.now); const lease = await leases.acquire('sync', 'a', 10_000); */
export function redisLeases(conn: RedisConnection, keys: RedisKeys, now: () => number): RedisLeases {
  return {
    acquire(name, owner, ttlMs) {
      return conn.transaction(async (tx) => {
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          const startedAt = now();
          await tx.watch([keys.lease(name), keys.fence(name)]);
          const [holder, fence] = (await tx.mGet([keys.lease(name), keys.fence(name)])) as (string | null)[];
          if (holder !== null && holder !== owner) {
            await tx.unwatch();
            return null;
          }
          // The holder taking it again keeps its token; a new holder (or one whose lease expired) gets a new one.
          const multi = tx.multi().set(keys.lease(name), owner, { PX: ttlMs });
          if (holder === null) multi.incr(keys.fence(name));
          try {
            const replies = (await multi.exec()) as unknown[];
            const token = holder === null ? Number(replies[1]) : Number(fence);
            return { name, owner, token, expiresAt: startedAt + ttlMs };
          } catch (error) {
            if (!(error instanceof WatchError)) throw error;
          }
        }
        return null;
      });
    },
    async renew(lease, ttlMs) {
      const startedAt = now();
      const done = await underLease(conn, keys, lease, [], async () => null, (multi) => {
        multi.set(keys.lease(lease.name), lease.owner, { PX: ttlMs });
      });
      return done ? { ...lease, expiresAt: startedAt + ttlMs } : null;
    },
    async release(lease) {
      await underLease(conn, keys, lease, [], async () => null, (multi) => {
        multi.del(keys.lease(lease.name));
      });
    },
  };
}
