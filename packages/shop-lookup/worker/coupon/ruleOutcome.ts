// What a coupon rule answers, and the few helpers every rule's cashier message uses. Rules are pure functions:
// they read a record and an order, never the clock, the network or IndexedDB.
import type { CouponRejection, VerdictDetail } from '../../src/protocol';

/** A rule let the coupon through, or rejected it with a reason and words a cashier can act on. */
export type RuleOutcome = { pass: true } | { pass: false; reason: CouponRejection; detail: VerdictDetail };

/** The order as the rules read it: checked and normalised by `readOrder`. */
export interface CheckedOrder {
  amount: number;
  /** The host's reference of the order; null when none was given. */
  orderId: string | null;
  /** When the order happens, epoch ms. */
  at: number;
  app: boolean;
  otherDiscount: boolean;
  acceptStale: boolean;
  acceptRepeatUse: boolean;
}

/** The outcome of a rule that lets the coupon through. @example if (use_app !== true) return PASS; */
export const PASS: RuleOutcome = { pass: true };

/**
 * A rejection by `rule`; `extra` adds the field read and its raw value.
 * @example reject('minimum', 'below_minimum', 'Order 9,000 is below the minimum of 10,000.')
 */
export function reject(
  rule: string,
  reason: CouponRejection,
  message: string,
  extra: Omit<VerdictDetail, 'rule' | 'message'> = {},
): RuleOutcome {
  return { pass: false, reason, detail: { rule, message, ...extra } };
}

const amountFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** An amount as a cashier reads it. @example formatAmount(10000) // '10,000' */
export function formatAmount(n: number): string {
  return amountFormat.format(n);
}

/** A value in a message: strings quoted, the rest as text. @example quote('stop') // '"stop"' */
export function quote(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return String(value);
}

/** A duration in words. @example formatAge(26 * 3_600_000) // '1 day 2 hours' */
export function formatAge(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (ms < 1000) return `${Math.max(0, Math.floor(ms))} ms`;
  if (minutes < 1) return `${Math.floor(ms / 1000)} seconds`;
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  const part = (n: number, unit: string) => (n === 0 ? '' : `${n} ${unit}${n === 1 ? '' : 's'}`);
  if (days > 0) return [part(days, 'day'), part(hours, 'hour')].filter(Boolean).join(' ');
  return [part(hours, 'hour'), part(mins, 'minute')].filter(Boolean).join(' ');
}
