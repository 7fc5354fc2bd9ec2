// Freshness rule: a "yes" decided from local data is only as good as that data. Like a card terminal's offline
// window, local data older than `maxDataAgeMs` (default 24 h) gives `stale` (unless the order accepts stale data).
import { dataAge } from '../store/dataAge';
import { formatAge, PASS, reject, type RuleOutcome } from './ruleOutcome';

export interface FreshnessInput {
  source: 'local' | 'network';
  /** When the API last confirmed the record (listing or its own confirmation); null = never. */
  syncedAt: number | null;
  now: number;
  maxDataAgeMs: number;
  /** The discount the coupon would give, reported with a `stale` verdict. */
  discount: number;
}

/**
 * `stale` when the verdict comes from local data that is older than `maxDataAgeMs` (exactly that old still
 * passes), was never confirmed, or is stamped in the future (dataAge.ts). A fresh API answer ('network') is never
 * stale. The order's `acceptStale` overrides it (decideCoupon.ts, which names the override on the verdict).
 * @example freshnessRule({ source: 'local', syncedAt: 0, now: 90_000_000, maxDataAgeMs: 86_400_000, discount: 3200 })
 */
export function freshnessRule(input: FreshnessInput): RuleOutcome {
  if (input.source === 'network') return PASS;
  if (input.syncedAt === null) {
    return reject(
      'freshness',
      'stale',
      'This coupon data was never confirmed by the shop API; check the coupon another way or accept it as stale.',
      { discount: input.discount },
    );
  }
  const dataAgeMs = dataAge(input.syncedAt, input.now)!;
  if (dataAgeMs <= input.maxDataAgeMs) return PASS;
  if (dataAgeMs === Number.POSITIVE_INFINITY) {
    // stamped while the till's clock was ahead: how old it really is cannot be told
    return reject(
      'freshness',
      'stale',
      "This coupon data was synced while the till's clock was ahead (it is stamped in the future), so its age is unknown; " +
        'check the coupon another way or accept it as stale.',
      { discount: input.discount },
    );
  }
  return reject(
    'freshness',
    'stale',
    `The coupon data on this till is ${formatAge(dataAgeMs)} old (the limit is ${formatAge(input.maxDataAgeMs)}); ` +
      'check the coupon another way or accept it as stale.',
    { discount: input.discount, dataAgeMs },
  );
}
