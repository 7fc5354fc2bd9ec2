// The sync lease over Redis: one key per lease holding { owner, token, expiresAt } with a PX TTL, and a fencing
// counter INCR'd for every new holder. A lease past its expiresAt (by the store's clock) is lost even before Redis
// drops the key, as in the memory store. `underLease` applies a write in MULTI/EXEC only while the lease is still
// the writer's: WATCH on the lease key, so a holder that lost it, even mid-transaction, gets its EXEC refused.
import { WatchError } from 'redis';
import type { RedisClient, RedisConnection } from './redisConnection';
import type { RedisKeys } from './redisKeys';
import type { Lease } from '../relayStore';

type Multi = ReturnType<RedisClient['multi']>;

export interface LeaseContext {
  conn: RedisConnection;
  keys: RedisKeys;
  now: () => number;
}

const ATTEMPTS = 10;

async function readLease(tx: RedisClient, keys: RedisKeys, name: string): Promise<Lease | null> {
  const json = (await tx.get(keys.lease(name))) as string | null;
  return json === null ? null : { name, ...(JSON.parse(json) as Omit<Lease, 'name'>) };
}

function leaseValue(lease: Lease): string {
  return JSON.stringify({ owner: lease.owner, token: lease.token, expiresAt: lease.expiresAt });
}

const live = (lease: Lease | null, now: number): lease is Lease => lease !== null && lease.expiresAt > now;

/**
 * Runs `prepare` (reads) and then `write` (queued into one MULTI) while `lease` is still held; retries when a
 * watched key changed meanwhile. Resolves to what `write` returned, or null when the lease was lost.
 * @example const done = await underLease(ctx, lease, [], async () => null, (m) => void m.set(k, v));
 */
export async function underLease<T, R>(
  { conn, keys, now }: LeaseContext,
  lease: Lease,
  watch: string[],
  prepare: (tx: RedisClient) => Promise<T>,
  write: (multi: Multi, prepared: T) => R,
): Promise<{ written: R } | null> {
  return conn.transaction(async (tx) => {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      await tx.watch([keys.lease(lease.name), ...watch]);
      const current = await readLease(tx, keys, lease.name);
      if (!live(current, now()) || current.owner !== lease.owner || current.token !== lease.token) {
        await tx.unwatch();
        return null;
      }
      const prepared = await prepare(tx);
      const multi = tx.multi();
      const written = write(multi, prepared);
      try {
        await multi.exec();
        return { written };
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

/** @example const leases = redisLeases({ conn, keys, now: Date.now }); await leases.acquire('sync', 'a', 10_000); */
export function redisLeases(ctx: LeaseContext): RedisLeases {
  const { conn, keys, now } = ctx;
  return {
    acquire(name, owner, ttlMs) {
      return conn.transaction(async (tx) => {
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          await tx.watch(keys.lease(name));
          const current = await readLease(tx, keys, name);
          const t = now();
          if (live(current, t) && current.owner !== owner) {
            await tx.unwatch();
            return null;
          }
          // The holder taking it again keeps its token; a new holder (or one whose lease expired) gets a new one.
          // (An INCR whose EXEC then fails only skips a number: tokens need to grow, not to be dense.)
          const token = live(current, t) ? current.token : Number(await tx.incr(keys.fence(name)));
          const lease: Lease = { name, owner, token, expiresAt: t + ttlMs };
          try {
            await tx.multi().set(keys.lease(name), leaseValue(lease), { PX: ttlMs }).exec();
            return lease;
          } catch (error) {
            if (!(error instanceof WatchError)) throw error;
          }
        }
        return null;
      });
    },
    async renew(lease, ttlMs) {
      const renewed: Lease = { ...lease, expiresAt: now() + ttlMs };
      const done = await underLease(
        ctx,
        lease,
        [],
        async () => null,
        (multi) => {
          multi.set(keys.lease(lease.name), leaseValue(renewed), { PX: ttlMs });
        },
      );
      return done ? renewed : null;
    },
    async release(lease) {
      await underLease(
        ctx,
        lease,
        [],
        async () => null,
        (multi) => {
          multi.del(keys.lease(lease.name));
        },
      );
    },
  };
}
