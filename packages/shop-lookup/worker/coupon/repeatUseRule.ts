// Repeat-use rule: an issued coupon this till already accepted for another sale is not a plain "yes" again while the
// API does not show that use (it learns of it only when the shop's order system records it). Overridable
// (`acceptRepeatUse`), so it comes after every rule that is not, as freshness does.
import type { EarlierUse } from '../../src/protocol';
import { formatAmount, PASS, reject, type CheckedOrder, type RuleOutcome } from './ruleOutcome';
import { formatShopTime } from './shopTime';

/**
 * `used_on_this_till` when `kind` is 'issued' and `uses` (this till's uses of the code the API has not confirmed)
 * holds one of another order: every use when the order has no `orderId`, else those of other `orderId`s (a cashier
 * checking the same order again is not a second use). The earliest such sale is named. The record's own status has
 * passed already: the API's record still says unused.
 * @example repeatUseRule('issued', [use], { orderId: 'A-2' }, 3200, 'Asia/Seoul').pass // false
 */
export function repeatUseRule(
  kind: 'coupon' | 'issued',
  uses: readonly EarlierUse[],
  order: Pick<CheckedOrder, 'orderId'>,
  discount: number,
  timeZone: string,
): RuleOutcome {
  if (kind !== 'issued') return PASS;
  const earlier = uses
    .filter((u) => order.orderId === null || u.orderId !== order.orderId)
    .sort((a, b) => a.at - b.at)[0];
  if (earlier === undefined) return PASS;
  const when = formatShopTime(earlier.at, timeZone);
  const check = earlier.orderId !== null ? `order ${earlier.orderId}` : `the sale of ${when}`;
  const sale = [
    earlier.orderId !== null ? `order ${earlier.orderId}` : 'a sale without an order reference',
    `${formatAmount(earlier.amount)}`,
    earlier.journalId !== null ? `journal entry ${earlier.journalId}` : 'its journal entry still waits for storage',
  ].join(', ');
  return reject(
    'use',
    'used_on_this_till',
    `This till already accepted this issued coupon at ${when} (${timeZone}) (${sale}), and the shop API does not show that use yet. ` +
      `Ask a manager to check ${check} on this till: a sale voided here gives the voucher back.`,
    { discount, earlierUse: earlier },
  );
}
