// The running upstream listing over Redis, so any instance can resume it after the lister died: the checkpoint as
// JSON and the staged records as a hash (key → { record, hash }), written together under the lease.
import { ShopLookupError } from '@shop-lookup/shop-api';
import { underLease, type LeaseContext } from './redisLease';
import type { Lease, ListingCheckpoint, ResourceId, StagedRecord } from '../relayStore';

/** @example const listing = redisListing({ conn, keys, now: Date.now }); await listing.readCheckpoint('coupons'); */
export function redisListing(ctx: LeaseContext) {
  const { conn, keys } = ctx;
  const { client } = conn;
  return {
    async readCheckpoint(resource: ResourceId): Promise<ListingCheckpoint | null> {
      const json = (await client.get(keys.checkpoint(resource))) as string | null;
      return json === null ? null : (JSON.parse(json) as ListingCheckpoint);
    },

    async stagePage(checkpoint: ListingCheckpoint, records: StagedRecord[], lease: Lease): Promise<void> {
      const { resource } = checkpoint;
      const done = await underLease(
        ctx,
        lease,
        [keys.checkpoint(resource)],
        async (tx) => {
          const json = (await tx.get(keys.checkpoint(resource))) as string | null;
          return json === null ? null : (JSON.parse(json) as ListingCheckpoint).listing;
        },
        (multi, runningListing) => {
          // a new listing starts from nothing: pages of an abandoned one must not leak into it
          if (runningListing !== checkpoint.listing) multi.del(keys.staged(resource));
          if (records.length > 0) {
            multi.hSet(
              keys.staged(resource),
              records.map((r) => [r.key, JSON.stringify({ record: r.record, hash: r.hash })]),
            );
          }
          multi.set(keys.checkpoint(resource), JSON.stringify(checkpoint));
        },
      );
      if (!done) {
        throw new ShopLookupError(
          'lease_lost',
          `Another relay instance took the "${lease.name}" lease: this page was not staged.`,
        );
      }
    },

    async readStaged(resource: ResourceId): Promise<Map<string, StagedRecord>> {
      const entries = (await client.hGetAll(keys.staged(resource))) as Record<string, string>;
      const staged = new Map<string, StagedRecord>();
      for (const [key, json] of Object.entries(entries)) {
        const { record, hash } = JSON.parse(json) as { record: unknown; hash: string };
        staged.set(key, { key, record, hash });
      }
      return staged;
    },

    async discardListing(resource: ResourceId): Promise<void> {
      await client.del([keys.checkpoint(resource), keys.staged(resource)]);
    },
  };
}
