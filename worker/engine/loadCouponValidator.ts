// Loads the checkout rules (validateCoupon.ts, a chunk of its own) and serves the engine's three checkout calls.
// Loading starts at once, beside the database, so the rules are in memory well before an offline checkout.
import type { EngineApi } from '../../src/protocol';
import type { CouponValidatorDeps } from '../coupon/validateCoupon';
import type { DatabaseClaim } from './databaseClaim';
import type { EngineCore } from './engineCore';

export interface LoadCouponValidatorDeps extends EngineCore, Pick<CouponValidatorDeps, 'refreshCoupon' | 'refreshIssuedCoupon'> {
  claim: DatabaseClaim;
}

export type Checkout = Pick<EngineApi, 'validateCoupon' | 'offlineJournal' | 'clearOfflineJournal'> & {
  /** Stops the journal's retries (close()). */
  dispose(): void;
};

/** @example const checkout = loadCouponValidator({ ...core, claim, refreshCoupon, refreshIssuedCoupon }); await checkout.validateCoupon('A', { amount: 1000 }); */
export function loadCouponValidator(deps: LoadCouponValidatorDeps): Checkout {
  const { couponPolicy, timeZone, maxDataAgeMs, coupons } = deps.options;
  const validator = import('../coupon/validateCoupon').then((m) =>
    m.createCouponValidator({
      db: deps.db,
      now: deps.now,
      isOffline: () => deps.connectivity.offline,
      refreshCoupon: deps.refreshCoupon,
      refreshIssuedCoupon: deps.refreshIssuedCoupon,
      onJournal: (unsavedJournal, journalError) => deps.status.facts.set({ unsavedJournal, journalError }),
      options: { couponPolicy, timeZone, maxDataAgeMs, coupons, refreshIntervalMs: deps.refreshIntervalMs },
    }),
  );
  validator.catch(() => undefined); // reported by the calls below
  const ready = async () => {
    await deps.claim.usable();
    return validator;
  };
  return {
    validateCoupon: async (code, order) => (await ready()).validate(code, order),
    offlineJournal: async (page) => (await ready()).journal(page),
    clearOfflineJournal: async (throughId) => (await ready()).clearJournal(throughId),
    dispose: () => void validator.then((v) => v.dispose(), () => undefined),
  };
}
