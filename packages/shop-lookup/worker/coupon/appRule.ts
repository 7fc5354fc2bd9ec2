// App rule: an app-only coupon (`use_app` true) applies only to orders from the shop's app.
import type { Coupon, IssuedCoupon } from '../../src/protocol';
import { PASS, reject, type CheckedOrder, type RuleOutcome } from './ruleOutcome';

/**
 * `app_only` when `use_app` is true and the order is not from the app. A null or missing `use_app` reads as false
 * (not app-only): the schema turns the legacy empty value '' into null, and unset flags are false in the admin.
 * @example appRule({ coupon_code: 'APPONLY', use_app: true }, { ...order, app: false }).pass // false
 */
export function appRule(record: Coupon | IssuedCoupon, order: Pick<CheckedOrder, 'app'>): RuleOutcome {
  if (record.use_app !== true || order.app) return PASS;
  return reject('app', 'app_only', "This coupon can only be used for orders placed in the shop's app.", {
    field: 'use_app',
    value: record.use_app,
  });
}
