// Other-till rule: an issued coupon another till of the shop accepted (the relay's feed told this till, or its answer
// to this till's claim) is not a plain "yes" while the API does not show that use. Overridable (`acceptRepeatUse`,
// as this till's own earlier use is), so it comes after every rule that is not.
import type { OtherTillUse } from '../../src/protocol';
import { PASS, reject, type RuleOutcome } from './ruleOutcome';
import { formatShopTime } from './shopTime';

/**
 * `used_on_another_till` when `kind` is 'issued' and `uses` (other tills' uses of the code the API has not confirmed,
 * as last heard) holds any: an `orderId` is a till's own numbering, so another till's order of the same id is
 * another sale (the same sale checked again is the same till's: repeatUseRule.ts). The earliest is named, and the
 * message says what the cashier can do: have a manager check that sale at that till (voided there, it gives the
 * voucher back).
 * @example otherTillUseRule('issued', [{ till: 'front-1', device, at, orderId: 'A-1' }], 3200, 'Asia/Seoul').pass
 * // false
 */
export function otherTillUseRule(
  kind: 'coupon' | 'issued',
  uses: readonly OtherTillUse[],
  discount: number,
  timeZone: string,
): RuleOutcome {
  if (kind !== 'issued') return PASS;
  const other = [...uses].sort((a, b) => a.at - b.at)[0];
  if (other === undefined) return PASS;
  const when = formatShopTime(other.at, timeZone);
  const sale = other.orderId !== null ? `order ${other.orderId}` : 'a sale without an order reference';
  const check = other.orderId !== null ? `order ${other.orderId}` : `the sale of ${when}`;
  return reject(
    'use',
    'used_on_another_till',
    `Till ${other.till} accepted this issued coupon at ${when} (${timeZone}) (${sale}), and the shop API does not show that use yet. ` +
      `Ask a manager to check ${check} at till ${other.till}: a sale voided there gives the voucher back.`,
    { discount, otherUse: other },
  );
}
