// Parent rule: an issued coupon is usable only while the coupon it was issued from is (status, period), as far as
// the till knows (findParentCoupon.ts). The shop stops or deletes the coupon, not each issued copy of it.
import type { CouponPolicy } from '../../src/protocol';
import type { ParentCoupon } from './findParentCoupon';
import { periodRule } from './periodRule';
import { formatShopTime } from './shopTime';
import { PASS, quote, reject, type RuleOutcome } from './ruleOutcome';
import { statusRule } from './statusRule';

/**
 * Passes when the coupon is not known here (the issued coupon's own fields decided already). Otherwise the coupon's
 * own record decides: `inactive` when its status is not active or it is gone, `not_started` / `expired` by its
 * `use_period` at the order's time, `unreadable` when its status or period cannot be read or its newer record could
 * not be read. The message names the coupon; `detail.field`/`value` are the coupon's.
 * @example parentRule({ state: 'held', code: 'SPRING', record, syncedAt }, order.at, { policy, timeZone }).pass
 */
export function parentRule(
  parent: ParentCoupon | undefined,
  at: number,
  settings: { policy: CouponPolicy; timeZone: string },
): RuleOutcome {
  if (parent === undefined || parent.state === 'unknown') return PASS;
  const of = `This issued coupon belongs to coupon ${quote(parent.code)}`;
  if (parent.state === 'gone') {
    return reject(
      'parent',
      'inactive',
      `${of}, which the shop no longer has (the shop API confirmed it gone at ${formatShopTime(parent.since, settings.timeZone)}).`,
      {
        field: 'coupon_code',
        value: parent.code,
      },
    );
  }
  const unreadable = parent.state === 'unreadable' ? parent.message : parent.unreadable;
  if (unreadable !== undefined || parent.state !== 'held') {
    return reject(
      'parent',
      'unreadable',
      `${of}, whose newer record this till cannot read: the shop may have stopped it. Check it in the shop admin. (${unreadable})`,
      {
        field: 'coupon_code',
        value: parent.code,
      },
    );
  }
  for (const outcome of [
    statusRule(parent.record, 'coupon', settings.policy),
    periodRule(parent.record, at, settings.timeZone),
  ]) {
    if (!outcome.pass) {
      const { rule: _rule, message, ...extra } = outcome.detail;
      return reject('parent', outcome.reason, `${of}: ${message}`, extra);
    }
  }
  return PASS;
}
