// Loads the checkout rules (validateCoupon.ts, a chunk of its own) and serves the engine's checkout calls, and the app
// tools that load with them (refresh, inspect) and clear()'s emptying of the database.
// Loading starts at once, beside the database, so the rules are in memory well before an offline checkout. The
// chunk also keeps the clock's offset beside the data (keepClockOffset.ts): the checkout waits for it to be read.
import type { EngineApi, LookupError } from '../../src/protocol';
import type { ServerClock } from '@shop-lookup/shop-api';
import type { CouponValidatorDeps } from '../coupon/validateCoupon';
import type { DatabaseClaim } from './databaseClaim';
import type { EngineCore } from './engineCore';
import type { InspectDeps } from './inspectEngine';
import type { RefreshOneDeps } from './refreshOne';

export interface LoadCouponValidatorDeps
  extends EngineCore,
    Pick<CouponValidatorDeps, 'refreshCoupon' | 'refreshIssuedCoupon' | 'claimUse'>,
    Pick<RefreshOneDeps, 'refreshLookup' | 'queryError'>,
    Pick<InspectDeps, 'readTrackedProducts'> {
  claim: DatabaseClaim;
  /** Why the database is in memory (openEngineStore.ts); null: it is IndexedDB. */
  memoryOnly: LookupError | null;
  /** The engine's clock: its offset is kept beside the data. */
  clock: ServerClock;
}

export type Checkout = Pick<
  EngineApi,
  | 'validateCoupon'
  | 'releaseCoupon'
  | 'offlineJournal'
  | 'clearOfflineJournal'
  | 'exportJournal'
  | 'refresh'
  | 'inspect'
> & {
  /** Empties the database and claims it again (clear(): emptyDatabase.ts). */
  emptyDatabase(discardJournal: boolean): Promise<void>;
  /** Stops the journal's retries (close()). */
  dispose(): void;
  /** Writes the clock's offset again (clear() emptied the database). */
  keepClock(): void;
};

/**
 * @example const checkout = loadCouponValidator({ ...core, claim, memoryOnly, clock, refreshCoupon,
 * refreshIssuedCoupon }); await checkout.validateCoupon('A', { amount: 1000 });
 */
export function loadCouponValidator(deps: LoadCouponValidatorDeps): Checkout {
  const { couponPolicy, timeZone, maxDataAgeMs, coupons } = deps.options;
  const chunk = import('./checkoutChunk');
  // the offset measured before a restart, until an answer tells the time again (a till restarted offline)
  const clockKept = chunk.then((m) => m.keepClockOffset(deps.db, deps.clock, deps.claim));
  const validator = chunk.then((m) =>
    m.createCouponValidator({
      db: deps.db,
      now: deps.now,
      isOffline: () => deps.connectivity.offline,
      refreshCoupon: deps.refreshCoupon,
      refreshIssuedCoupon: deps.refreshIssuedCoupon,
      onJournal: (unsavedJournal, journalError) => deps.status.facts.set({ unsavedJournal, journalError }),
      memoryOnly: deps.memoryOnly,
      ...(deps.claimUse ? { claimUse: deps.claimUse } : {}),
      options: { couponPolicy, timeZone, maxDataAgeMs, coupons, refreshIntervalMs: deps.refreshIntervalMs },
    }),
  );
  validator.catch(() => undefined); // reported by the calls below
  clockKept.catch(() => undefined);
  const ready = async () => {
    await deps.claim.usable();
    await clockKept;
    return validator;
  };
  return {
    validateCoupon: async (code, order) => (await ready()).validate(code, order),
    releaseCoupon: async (code, order) => (await ready()).release(code, order),
    offlineJournal: async (page) => (await ready()).journal(page),
    clearOfflineJournal: async (throughId) => (await ready()).clearJournal(throughId),
    exportJournal: async (options) => (await chunk).exportJournal(options, { ...deps, list: (await ready()).journal }),
    // the app tools, which load with the checkout's chunk (checkoutChunk.ts)
    refresh: async (target) => (await chunk).refreshOne(target, deps),
    inspect: async (options) => (await chunk).inspectEngine(deps, options),
    emptyDatabase: async (discardJournal) => (await chunk).emptyDatabase(deps.claim, deps.db, discardJournal),
    dispose: () =>
      void validator.then(
        (v) => v.dispose(),
        () => undefined,
      ),
    keepClock: () =>
      void clockKept.then(
        (k) => k.save(),
        () => undefined,
      ),
  };
}
