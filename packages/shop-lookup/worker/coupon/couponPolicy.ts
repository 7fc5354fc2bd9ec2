// How coupon `status` values are read. The spec lists none ("Allowed values of status: not shown"); the values
// below are the ones public client code and this project's mock show. Hosts override them with `couponPolicy`.
import { ShopLookupError } from '../../src/protocol';
import type { CouponPolicy } from '../../src/protocol';

/**
 * The documented default: "progress" is usable; "stop", "end" and "ready" (not started yet) are not; "complete" on
 * an issued coupon means it was used. Anything else is unreadable, never guessed.
 * @example DEFAULT_COUPON_POLICY.active // ['progress']
 */
export const DEFAULT_COUPON_POLICY: Readonly<CouponPolicy> = Object.freeze({
  active: ['progress'],
  inactive: ['stop', 'end', 'ready'],
  used: ['complete'],
});

const LISTS = ['active', 'inactive', 'used'] as const;

/** Where the policy places a status. */
export type StatusClass = 'active' | 'inactive' | 'used';

const norm = (s: string) => s.trim().toLowerCase();

/**
 * The host's policy merged over the default: each list the host gives replaces the default list, and a status the
 * host placed is removed from the default lists it did not give (so moving "ready" to `active` is one line).
 * Throws `bad_options` for lists that are not arrays of strings.
 * @example resolvePolicy({ active: ['progress', 'ready'] }).inactive // ['stop', 'end']
 */
export function resolvePolicy(override: Partial<CouponPolicy> | undefined): CouponPolicy {
  const given = override ?? {};
  const placed = new Set<string>();
  for (const list of LISTS) {
    const value = given[list];
    if (value === undefined) continue;
    if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) {
      throw new ShopLookupError('bad_options', `couponPolicy.${list} must be an array of status strings.`);
    }
    for (const s of value) placed.add(norm(s));
  }
  const out = {} as CouponPolicy;
  for (const list of LISTS) {
    const value = given[list];
    out[list] = value !== undefined ? value.map(norm) : DEFAULT_COUPON_POLICY[list].filter((s) => !placed.has(s));
  }
  return out;
}

/**
 * Where `status` falls, compared trimmed and case-insensitively; null when the policy cannot place it.
 * @example classifyStatus('PROGRESS', DEFAULT_COUPON_POLICY) // 'active'
 */
export function classifyStatus(status: unknown, policy: CouponPolicy): StatusClass | null {
  if (typeof status !== 'string' || status.trim() === '') return null;
  const s = norm(status);
  // used before inactive before active: when a host lists a status twice, the stricter reading wins
  if (policy.used.some((v) => norm(v) === s)) return 'used';
  if (policy.inactive.some((v) => norm(v) === s)) return 'inactive';
  if (policy.active.some((v) => norm(v) === s)) return 'active';
  return null;
}
