// The sync lease in this process's memory: one entry per lease holding { owner, token, expiresAt }, and a fencing
// counter that grows for every new holder. A lease past its expiresAt (by the store's clock) is lost even if nobody
// took it yet, as a Redis key with a TTL would be gone (redisLease.ts).
import type { Lease } from '../relayStore';

/** The memory store's leases; `check` throws `lease_lost` for a write by a lease no longer held. */
export interface MemoryLeases {
  acquire(name: string, owner: string, ttlMs: number): Promise<Lease | null>;
  renew(lease: Lease, ttlMs: number): Promise<Lease | null>;
  release(lease: Lease): Promise<void>;
  /** Throws an error with code `lease_lost` when `lease` is no longer held. */
  check(lease: Lease): void;
}

/** @example const leases = memoryLeases(Date.now); const lease = await leases.acquire('sync', 'a', 30_000); */
export function memoryLeases(now: () => number): MemoryLeases {
  const leases = new Map<string, Lease>();
  let fencing = 0;

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

  return {
    async acquire(name, owner, ttlMs) {
      const current = leases.get(name);
      const t = now();
      if (current && current.expiresAt > t && current.owner !== owner) return null;
      const keep = current && current.owner === owner && current.expiresAt > t;
      const lease: Lease = { name, owner, token: keep ? current.token : ++fencing, expiresAt: t + ttlMs };
      leases.set(name, lease);
      return { ...lease };
    },

    async renew(lease, ttlMs) {
      if (!holds(lease)) return null;
      const renewed = { ...lease, expiresAt: now() + ttlMs };
      leases.set(lease.name, renewed);
      return { ...renewed };
    },

    async release(lease) {
      if (holds(lease)) leases.delete(lease.name);
    },

    check(lease) {
      if (!holds(lease)) throw leaseLost(lease);
    },
  };
}
