// The order of a validateCoupon call, checked before any rule runs. A malformed order is the host's bug, not a
// property of the coupon, so it throws `bad_request` instead of becoming a verdict (and never reaches the journal).
import { ShopLookupError } from '../../src/protocol';
import type { CouponOrder } from '../../src/protocol';
import { codeProblem } from '@shop-lookup/shop-api';
import type { CheckedOrder } from './ruleOutcome';

const bad = (message: string) => new ShopLookupError('bad_request', message);

/** The longest `order.orderId` kept: an order reference, not a document (every journal entry carries it). */
const MAX_ORDER_ID = 200;

function flag(order: CouponOrder, name: 'app' | 'otherDiscount' | 'acceptStale' | 'acceptRepeatUse'): boolean {
  const v = order[name];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw bad(`order.${name} must be true or false, got ${JSON.stringify(v)}.`);
  return v;
}

/**
 * Checks a `releaseCoupon` call: the code as `readOrder` does, and an `orderId` (required: a use is released by the
 * order it was sold for). Throws `ShopLookupError('bad_request')`.
 * @example readRelease('IC-1', { orderId: 'A-1' }) // 'A-1'
 */
export function readRelease(code: unknown, order: { orderId?: unknown } | null | undefined): string {
  if (typeof code !== 'string' || code.trim() === '') throw bad('A coupon code must be a non-empty string.');
  const problem = codeProblem(code);
  if (problem !== null) throw bad(problem);
  const orderId = order?.orderId;
  if (typeof orderId !== 'string' || orderId.trim() === '' || orderId.length > MAX_ORDER_ID)
    throw bad(
      `releaseCoupon needs { orderId }: the order whose sale was voided, a non-empty string of at most ${MAX_ORDER_ID} characters, got ${JSON.stringify(orderId)}.`,
    );
  return orderId;
}

/**
 * Checks `code` and `order`; `now` is the default order time. Throws `ShopLookupError('bad_request')` for an empty
 * code or one that cannot be a path segment (`.`, `..`), an amount that is not a finite number ≥ 0, an `orderId` that
 * is not a non-empty string of at most 200 characters, or an `at` that is not a valid time.
 * @example readOrder('WELCOME10', { amount: 32000 }, Date.now()).at // now
 */
export function readOrder(code: unknown, order: CouponOrder, now: number): CheckedOrder {
  if (typeof code !== 'string' || code.trim() === '') throw bad('A coupon code must be a non-empty string.');
  const problem = codeProblem(code);
  if (problem !== null) throw bad(problem);
  if (typeof order !== 'object' || order === null)
    throw bad('validateCoupon needs an order object such as { amount: 32000 }.');
  const { amount } = order;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
    throw bad(
      `order.amount must be a finite number of 0 or more, got ${typeof amount === 'number' ? String(amount) : JSON.stringify(amount)}.`,
    );
  }
  const { orderId = null } = order;
  if (orderId !== null && (typeof orderId !== 'string' || orderId.trim() === '' || orderId.length > MAX_ORDER_ID)) {
    throw bad(
      `order.orderId must be a non-empty string of at most ${MAX_ORDER_ID} characters (your reference of the order), got ${JSON.stringify(orderId)}.`,
    );
  }
  let at = now;
  if (order.at !== undefined && order.at !== null) {
    at = order.at instanceof Date ? order.at.getTime() : order.at;
    if (typeof at !== 'number' || !Number.isFinite(at))
      throw bad('order.at must be epoch milliseconds or a valid Date.');
  }
  return {
    amount,
    orderId,
    at,
    app: flag(order, 'app'),
    otherDiscount: flag(order, 'otherDiscount'),
    acceptStale: flag(order, 'acceptStale'),
    acceptRepeatUse: flag(order, 'acceptRepeatUse'),
  };
}
