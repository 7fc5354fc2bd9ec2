// Which routes one request may use: asked of the host's authorize route by route, for the discovery answer (the
// engine then asks for nothing it would be refused) and for the feed (which carries the coupon list only to a
// client that may list coupons). Discovery is open to every client allowed at least one route of a till (the
// operators' `status` does not count: a till refused everything must read its refusal, not a list of nothing).
import type { IncomingMessage } from 'node:http';
import { checkAccess, type AccessOptions } from './door/access';
import type { Authorize, RouteName } from './door/types';

/** Every route, in the order the discovery answer lists them. */
export const ALL_ROUTES: readonly RouteName[] = [
  'coupons',
  'coupon',
  'issuedCoupon',
  'productOptions',
  'productOption',
  'discovery',
  'feed',
  'products',
  'status',
  'uses',
];

/** Whether a client allowed `route` may read the discovery answer: a till's routes, not the operators' status. */
const OPENS_DISCOVERY = (route: RouteName): boolean => route !== 'discovery' && route !== 'status';

/**
 * The routes `req` may use (authorize asked for each; a throwing authorize counts as a refusal here).
 * @example await allowedRoutes(access, req) // ['coupon', 'productOptions', 'productOption', 'discovery']
 */
export async function allowedRoutes(access: AccessOptions, req: IncomingMessage): Promise<RouteName[]> {
  const verdicts = await Promise.all(ALL_ROUTES.map(async (route) => (await checkAccess(access, req, route)) === null));
  const some = verdicts.some((allowed, i) => allowed && OPENS_DISCOVERY(ALL_ROUTES[i]!));
  // discovery is open to a client allowed any route (discoveryOpen): it is answering this very request
  return ALL_ROUTES.filter((route, i) => verdicts[i] || (route === 'discovery' && some));
}

/**
 * The host's authorize with discovery opened to every client it allows some till route: such a client may learn what it
 * may use (and which shop this is), so it never asks for what it would be refused.
 * @example createRequestGate({ ...options, authorize: discoveryOpen(options.authorize) })
 */
export function discoveryOpen(authorize: Authorize | undefined): Authorize | undefined {
  if (!authorize) return undefined;
  return async (req, route) => {
    const verdict = await authorize(req, route);
    if (verdict === true || route !== 'discovery') return verdict;
    for (const other of ALL_ROUTES) {
      if (OPENS_DISCOVERY(other) && (await authorize(req, other)) === true) return true;
    }
    return verdict;
  };
}
