// The checkout decision for one found record: the rules in their documented order, first rejection wins.
// Order: record → status → period → parent → app → combination → minimum → discount → use (this
// till's, then another till's) → freshness. Whether the copy can be relied on at all comes first (its newer record
// could not be read), then the coupon's own validity (it cannot be used at all), then, for an issued coupon, its
// coupon's, then what the order must be, then the amount; the rules an order may override (an earlier use of an
// issued coupon, here or at another till; old data) come last: they only ever hold back a "yes" (and report the
// discount that "yes" would give), and an override is asked for only when nothing that cannot be overridden refuses.
import type {
  Coupon,
  CouponOverride,
  CouponPolicy,
  CouponVerdict,
  EarlierUse,
  IssuedCoupon,
  OtherTillUse,
} from '../../src/protocol';
import { quoteCode } from '@shop-lookup/shop-api';
import { appRule } from './appRule';
import { combinationRule } from './combinationRule';
import { dataAge } from '../store/dataAge';
import { discountRule } from './discountRule';
import type { ParentCoupon } from './findParentCoupon';
import { recordRule } from './recordRule';
import { freshnessRule } from './freshnessRule';
import { minimumRule } from './minimumRule';
import { otherTillUseRule } from './otherTillUseRule';
import { parentRule } from './parentRule';
import { periodRule } from './periodRule';
import { repeatUseRule } from './repeatUseRule';
import type { CheckedOrder, RuleOutcome } from './ruleOutcome';
import { statusRule } from './statusRule';
import { useCountWarning } from './useCountWarning';

/** The record a code led to, and where the verdict's knowledge of it comes from. */
export interface FoundCoupon {
  kind: 'coupon' | 'issued';
  record: Coupon | IssuedCoupon;
  /** Latest API confirmation of the record: the coupon listing or its own lookup; null = never. */
  syncedAt: number | null;
  source: 'local' | 'network';
  /** The latest record the API sent for it could not be read (why, in words): this copy is confirmed by nothing. */
  unreadable?: string;
  /** An issued coupon's coupon, as far as the till knows (findParentCoupon.ts). */
  parent?: ParentCoupon;
  /** An issued coupon's uses on this till that the API has not confirmed yet (the journal's). */
  uses?: EarlierUse[];
  /**
   * An issued coupon's uses at other tills that the API has not confirmed, as the relay last told
   * (findOtherTillUses.ts).
   */
  otherUses?: OtherTillUse[];
}

/** Settings the rules read. */
export interface DecisionSettings {
  policy: CouponPolicy;
  timeZone: string;
  /** Now, epoch ms (for the data's age; the period uses the order's `at`). */
  now: number;
  maxDataAgeMs: number;
}

/**
 * Applies every rule to `found` for `order`; pure (no clock, network or storage).
 * @example decideCoupon({ kind: 'coupon', record, syncedAt, source: 'local' }, order, settings).ok
 */
export function decideCoupon(found: FoundCoupon, order: CheckedOrder, settings: DecisionSettings): CouponVerdict {
  const { record, kind, syncedAt, source } = found;
  const rules: (() => RuleOutcome)[] = [
    () => recordRule(found.unreadable, syncedAt, settings.now),
    () => statusRule(record, kind, settings.policy),
    () => periodRule(record, order.at, settings.timeZone),
    () => parentRule(found.parent, order.at, settings),
    () => appRule(record, order),
    () => combinationRule(record, order),
    () => minimumRule(record, order),
  ];
  for (const rule of rules) {
    const outcome = rule();
    if (!outcome.pass)
      return { ok: false, reason: outcome.reason, coupon: record, kind, syncedAt, source, detail: outcome.detail };
  }
  const discount = discountRule(record, order);
  if (!discount.pass)
    return { ok: false, reason: discount.reason, coupon: record, kind, syncedAt, source, detail: discount.detail };
  // the overridable rules are asked without their override, so the verdict can say which override let it through
  const overrides: CouponOverride[] = [];
  const repeat = repeatUseRule(kind, found.uses ?? [], order, discount.discount, settings.timeZone);
  if (!repeat.pass && !order.acceptRepeatUse)
    return { ok: false, reason: repeat.reason, coupon: record, kind, syncedAt, source, detail: repeat.detail };
  const other = otherTillUseRule(kind, found.otherUses ?? [], discount.discount, settings.timeZone);
  if (!other.pass && !order.acceptRepeatUse)
    return { ok: false, reason: other.reason, coupon: record, kind, syncedAt, source, detail: other.detail };
  if (!repeat.pass || !other.pass) overrides.push('repeat_use');
  const fresh = freshnessRule({
    source,
    syncedAt,
    now: settings.now,
    maxDataAgeMs: settings.maxDataAgeMs,
    discount: discount.discount,
  });
  if (!fresh.pass && !order.acceptStale)
    return { ok: false, reason: fresh.reason, coupon: record, kind, syncedAt, source, detail: fresh.detail };
  if (!fresh.pass) overrides.push('stale');
  const age = source === 'local' ? dataAge(syncedAt, settings.now) : null;
  const detail = {
    rule: 'discount',
    message: discount.message,
    ...(age !== null && age !== Number.POSITIVE_INFINITY ? { dataAgeMs: age } : {}),
  };
  const counted = found.parent?.state === 'held' ? found.parent.record : record;
  // biome-ignore lint/correctness/useHookAtTopLevel: the coupon's use count, not a React hook
  const warning = useCountWarning(counted);
  return {
    ok: true,
    discount: discount.discount,
    coupon: record,
    kind,
    syncedAt,
    source,
    detail,
    ...(overrides.length > 0 ? { overrides } : {}),
    ...(warning ? { warnings: [warning] } : {}),
  };
}

/**
 * The verdict for a code that led to no record: `not_found` when the API confirmed both code spaces empty,
 * `unknown_offline` when it could not be asked (or its word is too old to rely on), `unchecked` when it answered
 * without deciding (`why`: what it answered; `whyFirst`: it leads the message, as a refused till token does, which
 * the cashier must act on before any code can be checked).
 * @example absentVerdict('NOPE', 'not_found', 1767193200000, 'network')
 */
export function absentVerdict(
  code: string,
  reason: 'not_found' | 'unknown_offline' | 'unreadable' | 'unchecked',
  syncedAt: number | null,
  source: 'local' | 'network',
  why = '',
  whyFirst = false,
): CouponVerdict {
  const message =
    reason === 'not_found'
      ? `No coupon or issued coupon with code ${quoteCode(code)} exists in this shop (confirmed by the shop API).`
      : reason === 'unreadable'
        ? `The shop API sent a record for code ${quoteCode(code)} that this till cannot read; check the coupon in the shop admin. (${why})`
        : reason === 'unchecked' && whyFirst
          ? `${why} Code ${quoteCode(code)} is not known on this till, so it was not checked.`
          : reason === 'unchecked'
            ? `Code ${quoteCode(code)} is not known on this till, and the shop API did not check it: ${why}`
            : `Code ${quoteCode(code)} is not known on this till, and the shop API cannot be reached to check it.`;
  return {
    ok: false,
    reason,
    syncedAt,
    source,
    detail: { rule: reason === 'unreadable' ? 'record' : 'lookup', message },
  };
}
