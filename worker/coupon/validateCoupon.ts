// validateCoupon: the checkout decision. Finds the record a code leads to (findCoupon: local first, the API when
// online), runs the rules (decideCoupon), and journals every verdict given from local data while offline.
import { ShopLookupError } from '../../src/protocol';
import type { CouponOrder, CouponPolicy, CouponVerdict, JournalEntry, JournalPage } from '../../src/protocol';
import { typedCode } from '@shop-lookup/shop-api';
import { resolvePolicy } from './couponPolicy';
import { absentVerdict, decideCoupon } from './decideCoupon';
import { findCoupon } from './findCoupon';
import { DEFAULT_MAX_DATA_AGE_MS } from './freshnessRule';
import { readOrder } from './readOrder';
import { assertTimeZone } from './shopTime';
import { createOfflineJournal, type JournalHealth } from './offlineJournal';
import type { ShopDatabase } from '../store/store';

/** The shop time zone naive coupon dates are read in, unless the host sets `timeZone`. @example options.timeZone ?? DEFAULT_TIME_ZONE */
const DEFAULT_TIME_ZONE = 'Asia/Seoul';

export interface CouponValidatorDeps {
  db: ShopDatabase;
  now: () => number;
  /** The API cannot be reached right now. */
  isOffline: () => boolean;
  /** Fetches the coupon from the API into IndexedDB (read-through; `-11` stores "does not exist"). Rejects on failure. */
  refreshCoupon(code: string): Promise<void>;
  refreshIssuedCoupon(code: string): Promise<void>;
  /** Told how many journal entries wait in memory because storage refused them, and why (null: none wait). */
  onJournal?: JournalHealth;
  options: {
    couponPolicy?: Partial<CouponPolicy> | undefined;
    timeZone?: string | undefined;
    maxDataAgeMs?: number | undefined;
    refreshIntervalMs: number;
  };
}

export interface CouponValidator {
  validate(code: string, order: CouponOrder): Promise<CouponVerdict>;
  journal(page?: JournalPage): Promise<JournalEntry[]>;
  clearJournal(throughId: number): Promise<number>;
  /** Stops the journal's retries (the engine closes). */
  dispose(): void;
}

/** The host's options, checked once (a bad option throws `bad_options` from every validate call). */
function readSettings(options: CouponValidatorDeps['options']) {
  const timeZone = options.timeZone ?? DEFAULT_TIME_ZONE;
  assertTimeZone(timeZone);
  const maxDataAgeMs = options.maxDataAgeMs ?? DEFAULT_MAX_DATA_AGE_MS;
  if (typeof maxDataAgeMs !== 'number' || Number.isNaN(maxDataAgeMs) || maxDataAgeMs < 0) {
    throw new ShopLookupError('bad_options', `maxDataAgeMs must be a number of milliseconds of 0 or more, got ${String(maxDataAgeMs)}.`);
  }
  return { policy: resolvePolicy(options.couponPolicy), timeZone, maxDataAgeMs };
}

/**
 * The engine's coupon validator. A bad order throws `ShopLookupError('bad_request')` (the host's bug, not a
 * verdict); everything about the coupon is a verdict.
 * @example const v = await createCouponValidator(deps).validate('WELCOME10', { amount: 32000 }); // { ok: true, discount: 3200, … }
 */
export function createCouponValidator(deps: CouponValidatorDeps): CouponValidator {
  const journal = createOfflineJournal(deps.db, deps.onJournal);
  let settings: ReturnType<typeof readSettings> | null = null;

  return {
    async validate(typed, order) {
      settings ??= readSettings(deps.options);
      // one form of the code for the API, the local tables and the journal
      const code = typedCode(typed);
      const checked = readOrder(code, order, deps.now());
      const outcome = await findCoupon(code, { ...deps, maxDataAgeMs: settings.maxDataAgeMs });
      const now = deps.now();
      const verdict =
        'found' in outcome
          ? decideCoupon(outcome.found, checked, { ...settings, now })
          : absentVerdict(code, outcome.absent, outcome.syncedAt, outcome.source, 'message' in outcome ? outcome.message : '');
      // decided without the API while it could not be reached: keep it for reconciling later. A journal that
      // cannot be written never blocks the checkout; the verdict says so (and the entry waits in memory).
      if (verdict.source === 'local' && (outcome.networkTrouble || deps.isOffline())) {
        verdict.journaled = await journal.record(code, checked.amount, verdict, now);
      }
      return verdict;
    },
    journal: (page) => journal.list(page),
    clearJournal: (throughId) => journal.clear(throughId),
    dispose: () => journal.dispose(),
  };
}
