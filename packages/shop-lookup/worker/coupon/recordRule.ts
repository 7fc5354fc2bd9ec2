// Record rule: a copy whose newer record the API sent could not be read says nothing reliable. The shop may have
// stopped the coupon in the very record this till cannot read, so the copy kept never passes (unreadableMarks.ts).
import { dataAge } from '../store/dataAge';
import { formatAge, PASS, reject, type RuleOutcome } from './ruleOutcome';

/**
 * `unreadable` when `unreadable` (why the newer record was rejected) is given; the copy's age is reported.
 * @example recordRule('data.list[3].status: expected text, got an object', syncedAt, Date.now())
 */
export function recordRule(unreadable: string | undefined, syncedAt: number | null, now: number): RuleOutcome {
  if (unreadable === undefined) return PASS;
  const age = dataAge(syncedAt, now);
  const known = age !== null && age !== Number.POSITIVE_INFINITY;
  return reject(
    'record',
    'unreadable',
    `The shop API sent a newer record of this coupon that this till cannot read, so the copy here${known ? ` (${formatAge(age)} old)` : ''} ` +
      `may be out of date: the shop may have changed or stopped the coupon. Check it in the shop admin. (${unreadable})`,
    known ? { dataAgeMs: age } : {},
  );
}
