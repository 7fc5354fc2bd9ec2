// The engine's clear() and close(): what stops first matters, so the order lives here, in one place.
import { ShopLookupError } from '../../src/protocol';
import type { EngineApi } from '../../src/protocol';
import type { ReadCache } from '../store/readCache';
import type { StorageChanges } from '../store/storageChanges';
import type { ShopDatabase } from '../store/store';
import type { Connectivity } from '../tabs/connectivity';
import type { Tabs } from '../tabs/joinTabs';
import type { EngineSync } from './engineSync';
import type { ItemRefreshes } from './itemRefreshes';
import type { Checkout } from './loadCouponValidator';
import type { NetworkLoad } from './loadNetwork';
import type { WatchRegistry } from './watchRegistry';

/** Whether the engine is closed; `closing` aborts every request, retry wait and lock wait of it. */
export interface Lifetime {
  closed: boolean;
  readonly closing: AbortController;
}

export interface EngineParts {
  life: Lifetime;
  db: ShopDatabase;
  load: NetworkLoad;
  refreshes: ItemRefreshes;
  watches: WatchRegistry;
  engineSync: EngineSync;
  tabs: Tabs;
  changes: StorageChanges;
  cache: ReadCache | undefined;
  connectivity: Connectivity;
  checkout: Checkout;
}

const ignore = () => undefined;

/**
 * @example const { clear, close } = clearAndClose({ life, db, load, refreshes, watches, engineSync, tabs, changes,
 * cache, connectivity, checkout });
 */
export function clearAndClose(p: EngineParts): Pick<EngineApi, 'clear' | 'close'> {
  return {
    async clear(options) {
      await p.load.network.then((n) => n.runner.cancel(), ignore);
      await p.refreshes.settled();
      await p.checkout.emptyDatabase(options?.discardJournal === true);
      p.tabs.cleared();
    },
    async close() {
      if (p.life.closed) return;
      p.life.closed = true;
      // nothing starts a sync, polls or emits any more; then the requests under way end
      p.engineSync.dispose();
      p.load.dispose();
      p.tabs.dispose();
      p.watches.stopAll();
      p.cache?.dispose();
      p.changes.dispose();
      p.checkout.dispose();
      p.life.closing.abort(new ShopLookupError('closed', 'shop-lookup was closed.'));
      await p.load.network.then((n) => {
        n.limiter.dispose();
        return n.runner.cancel();
      }, ignore);
      await p.refreshes.settled();
      p.connectivity.dispose();
      p.db.close();
    },
  };
}
