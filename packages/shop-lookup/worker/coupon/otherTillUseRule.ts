// Other-till rule: an issued coupon another till of the shop accepted (the relay's feed told this till) is not a plain
// "yes" while the API does not show that use. Overridable (`acceptRepeatUse`, as this till's own earlier use is), so
// it comes after every rule that is not.
import type { OtherTillUse } from '../../src/protocol';
import { PASS, reject, type CheckedOrder, type RuleOutcome } from './ruleOutcome';
import { formatShopTime } from './shopTime';

/**
 * `used_on_another_till` when `kind` is 'issued' and `uses` (other tills' uses of the code the API has not
 * confirmed, as last heard) holds one of another order: every use when the order has no `orderId`, else those of
 * other `orderId`s (the same order checked at another till is not a second use). The earliest is named.
 * @example otherTillUseRule('issued', [{ till: 'front-1', device, at, orderId: 'A-1' }], { orderId: 'B-7' }, 3200,
 * 'Asia/Seoul').pass // false
 */
export function otherTillUseRule(
  kind: 'coupon' | 'issued',
  uses: readonly OtherTillUse[],
  order: Pick<CheckedOrder, 'orderId'>,
  discount: number,
  timeZone: string,
): RuleOutcome {
  if (kind !== 'issued') return PASS;
  const other = uses
    .filter((u) => order.orderId === null || u.orderId !== order.orderId)
    .sort((a, b) => a.at - b.at)[0];
  if (other === undefined) return PASS;
  const sale = other.orderId !== null ? `order ${other.orderId}` : 'a sale without an order reference';
  return reject(
    'use',
    'used_on_another_till',
    `Till ${other.till} accepted this issued coupon at ${formatShopTime(other.at, timeZone)} (${timeZone}) (${sale}), and the shop API does not show that use yet. ` +
      'Accept it here only if that sale was cancelled (acceptRepeatUse).',
    { discount, otherUse: other },
  );
}
