// The running upstream listing in this process's memory: each resource's checkpoint and its staged records, written
// under the lease (as redisListing.ts keeps them in Redis, so another instance can resume them).
import type { Lease, ListingCheckpoint, ResourceId, StagedRecord } from '../relayStore';
import type { MemoryLeases } from './memoryLease';

const clone = <T>(value: T): T => structuredClone(value);

/** @example const listing = memoryListing(leases); await listing.readCheckpoint('coupons'); */
export function memoryListing(leases: MemoryLeases) {
  const checkpoints = new Map<ResourceId, ListingCheckpoint>();
  const staged = new Map<ResourceId, Map<string, StagedRecord>>();
  return {
    async readCheckpoint(resource: ResourceId): Promise<ListingCheckpoint | null> {
      const checkpoint = checkpoints.get(resource);
      return checkpoint ? { ...checkpoint } : null;
    },

    async stagePage(checkpoint: ListingCheckpoint, records: StagedRecord[], lease: Lease): Promise<void> {
      leases.check(lease);
      const previous = checkpoints.get(checkpoint.resource);
      let pages = staged.get(checkpoint.resource);
      if (!pages || previous?.listing !== checkpoint.listing) staged.set(checkpoint.resource, (pages = new Map()));
      for (const r of records) pages.set(r.key, clone(r));
      checkpoints.set(checkpoint.resource, { ...checkpoint });
    },

    async readStaged(resource: ResourceId): Promise<Map<string, StagedRecord>> {
      return new Map([...(staged.get(resource) ?? [])].map(([k, r]) => [k, clone(r)]));
    },

    async discardListing(resource: ResourceId): Promise<void> {
      checkpoints.delete(resource);
      staged.delete(resource);
    },
  };
}
