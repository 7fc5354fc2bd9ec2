// What a sync and a relay ask of the database claim (databaseClaim.ts): a sync under the lock once the claim still
// holds, and the shop a relay names checked against it. In the network chunk (createNetwork.ts): only syncs and the
// relay's answers use them, so the worker's first load carries none of it.
import { ShopLookupError } from '../../src/protocol';
import type { LookupError } from '../../src/protocol';
import type { DatabaseClaim } from './databaseClaim';

export interface NetworkClaim {
  /**
   * Runs `work` holding the sync lock, once the claim under it still holds (another tab may have cleared meanwhile).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /**
   * The shop the relay at baseUrl names (discovery, every feed answer): checked against the database's claim before
   * anything of the relay is written. Throws `shop_mismatch` for another shop's relay, and then the whole engine
   * refuses the database, as it does for a direct engine of another shop.
   */
  relayShop(name: string | null): Promise<void>;
}

const refusal = (e: LookupError) => new ShopLookupError(e.code, e.message);

/** @example const { exclusive, relayShop } = networkClaim(claim, options.baseUrl, db.name); */
export function networkClaim(claim: DatabaseClaim, baseUrl: string, dbName: string): NetworkClaim {
  return {
    // Every sync checks under the lock whose the database is: another tab may have cleared it meanwhile, and
    // another shop claimed it. Then nothing of this shop is written there.
    exclusive: (work) =>
      claim.underLock(async () => {
        const blocked = await claim.check();
        if (blocked) {
          claim.reclaim();
          throw refusal(blocked);
        }
        return work();
      }),
    async relayShop(name) {
      if (!name) {
        throw new ShopLookupError(
          'shop_mismatch',
          `The relay at ${baseUrl} does not name its shop, so this till cannot check that it serves the shop of the local database "${dbName}"; nothing of it is stored. Update the relay (shop-lookup/relay names its shop in every answer).`,
        );
      }
      if (name === claim.relayShop) return claim.usable(); // checked already: the claim's answer stands
      claim.relayShop = name;
      const wasBlocked = await claim.ready;
      const blocked = await claim.check();
      // every entry follows the new answer: refused (lookups, status, the scheduler), or no longer refused
      if (blocked || wasBlocked) claim.reclaim(Promise.resolve(blocked));
      if (blocked) throw refusal(blocked);
    },
  };
}
