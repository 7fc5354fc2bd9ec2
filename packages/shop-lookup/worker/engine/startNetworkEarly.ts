// A storefront's start, in the network chunk: the API access and the opening reads of its tracked products'
// options (none while the platform says offline), made as soon as the chunk is in, before the database is open.
import { startOpeningReads } from '../sync/openingReads';
import { createApiAccess, type ApiAccessDeps } from './createNetwork';
import type { NetworkModule, NetworkStart } from './loadNetwork';

export interface EarlyNetworkDeps extends ApiAccessDeps {
  now: () => number;
  /** Whose options are read at once. */
  productNos: readonly number[];
}

/**
 * @example const start = import('./createNetwork').then((m) => m.startNetworkEarly(m, { options, fetch, connectivity,
 * signal, onServerDate, now, productNos }));
 */
export function startNetworkEarly(module: NetworkModule, deps: EarlyNetworkDeps): Required<NetworkStart> {
  const access = createApiAccess(deps);
  const productNos = deps.connectivity.offline ? [] : deps.productNos;
  const opening = startOpeningReads(productNos, { client: access.client, now: deps.now, signal: deps.signal });
  return { module, access, opening };
}
