// refresh(target): one coupon, issued coupon, product's options or option asked for again now (a query's refetch),
// through the lookups' own refresh (itemRefreshes.ts): open lookups of it update from what it writes.
import { ShopLookupError } from '../../src/protocol';
import type { LookupError, LookupQuery, RefreshReport, RefreshTarget } from '../../src/protocol';
import { engineError } from '../store/storageErrors';
import type { Connectivity } from '../tabs/connectivity';

/**
 * The lookups' own pieces are passed in (this file loads with the checkout's chunk, and the lookups' modules stay in
 * the worker's first load only).
 */
export interface RefreshOneDeps {
  connectivity: Connectivity;
  /** Refreshes a lookup's data now (its plan's refresh: itemRefreshes.ts); rejects on failure. */
  refreshLookup(query: LookupQuery): Promise<void>;
  /** What is wrong with a lookup's arguments (queryError.ts). */
  queryError(query: LookupQuery): LookupError | null;
}

/** The lookup a target names; throws `bad_request` for anything else. */
function queryOf(target: RefreshTarget, check: RefreshOneDeps['queryError']): LookupQuery {
  const t = (target ?? {}) as Partial<
    Record<'coupon' | 'issuedCoupon' | 'productNo' | 'optionNo' | 'optionCode', unknown>
  >;
  const query = (
    'coupon' in t
      ? { kind: 'coupon', code: t.coupon }
      : 'issuedCoupon' in t
        ? { kind: 'issuedCoupon', code: t.issuedCoupon }
        : !('productNo' in t)
          ? null
          : t.optionNo !== undefined
            ? { kind: 'productOptionByNo', productNo: t.productNo, optionNo: t.optionNo }
            : t.optionCode !== undefined
              ? { kind: 'productOptionByCode', productNo: t.productNo, optionCode: t.optionCode }
              : { kind: 'productOptions', productNo: t.productNo }
  ) as LookupQuery | null;
  const problem = query
    ? check(query)
    : {
        message: `refresh() needs { coupon }, { issuedCoupon } or { productNo, optionNo?, optionCode? }, got ${JSON.stringify(target)} (the coupon list is refreshed by sync()).`,
      };
  if (problem) throw new ShopLookupError('bad_request', problem.message);
  return query!;
}

const offlineError = () => ({
  code: 'network_error' as const,
  message: 'Offline: the shop API was not asked. The lookups answer from the data kept on this device.',
});

/**
 * Never rejects for the network or the API: the report says what happened (a wrong target, or a closed engine,
 * rejects).
 * @example await refreshOne({ coupon: 'WELCOME10' }, { connectivity, refreshLookup, queryError }) // { ok: true, … }
 */
export async function refreshOne(target: RefreshTarget, deps: RefreshOneDeps): Promise<RefreshReport> {
  const query = queryOf(target, deps.queryError);
  if (deps.connectivity.offline) return { ok: false, offline: true, error: offlineError() };
  try {
    await deps.refreshLookup(query);
    return { ok: true, offline: false, error: null };
  } catch (error) {
    const e = engineError(error);
    if (e.code === 'closed') throw error;
    return { ok: false, offline: deps.connectivity.offline, error: e };
  }
}
