// One lookup's refresh from the API; concurrent refreshes of the same item share one request.
// An item is read through (a coupon, a product's options); the lists' refresh is the full sync.
import { ShopLookupError } from '../../src/protocol';
import type { SyncReport } from '../../src/protocol';
import type { LookupPlan } from '../lookups/lookupPlans';
import type { EngineCore } from './engineCore';
import type { LoadedNetwork } from './loadNetwork';

export interface ItemRefreshesDeps extends EngineCore {
  network: Promise<LoadedNetwork>;
  /** The full sync: the lists' refresh. */
  sync(): Promise<SyncReport>;
}

export interface ItemRefreshes {
  /** Refreshes one lookup's data now. Rejects on failure. */
  refreshNow(plan: LookupPlan): Promise<void>;
  /** A refresh in the background: its outcome arrives through the watch's re-read and the resource state. */
  refresh(plan: LookupPlan): void;
  /** Resolves once every refresh under way has settled. */
  settled(): Promise<unknown>;
}

/** @example const refreshes = createItemRefreshes({ ...core, network, sync }); await refreshes.refreshNow(plan); */
export function createItemRefreshes(deps: ItemRefreshesDeps): ItemRefreshes {
  const inflight = new Map<string, Promise<void>>();

  function refreshNow(plan: LookupPlan): Promise<void> {
    if (plan.refresh === 'sync') return deps.sync().then(() => undefined);
    if (plan.refresh === 'none') return Promise.resolve();
    const key = plan.stateKeys[0]!;
    if (deps.isClosed()) return Promise.reject(new ShopLookupError('closed', 'shop-lookup was closed.'));
    const running = inflight.get(key);
    if (running) return running;
    const work = plan.refresh;
    const run = deps.resources
      .track(key, async () => {
        const net = await deps.network;
        // a route the relay's discovery answer left out for this client is not asked (it would only be refused)
        const refused = plan.route === undefined ? null : net.refusal(plan.route);
        if (refused) throw refused;
        return work(net.userContext(), net.module);
      })
      .finally(() => inflight.delete(key));
    inflight.set(key, run);
    return run;
  }

  return {
    refreshNow,
    refresh(plan) {
      // the full listing is the leader's job; other engines see its results through the shared database
      if (plan.refresh === 'none' || (plan.refresh === 'sync' && !deps.leadership.isLeader)) return;
      refreshNow(plan).catch(() => undefined);
    },
    settled: () => Promise.allSettled(inflight.values()),
  };
}
