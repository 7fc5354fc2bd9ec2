// The engine: everything behind the six lookups, assembled from the parts in this folder (worker/engine/).
// It runs in a Web Worker (worker.ts exposes it with Comlink) or, with `worker: false`, in the host's own thread.
// Platform pieces are passed in.
import type { AskToken, EngineApi, EngineOptions, LookupQuery, WatchListener } from '../../src/protocol';
import { createServerClock, type RetryPolicy, type ServerClock } from '@shop-lookup/shop-api';
import { planLookup } from '../lookups/lookupPlans';
import { queryError } from '../lookups/queryError';
import { createResourceState } from '../lookups/resourceState';
import { createReadCache } from '../store/readCache';
import { defaultDbName } from '../store/shopIdentity';
import { createStorageChanges } from '../store/storageChanges';
import { engineError } from '../store/storageErrors';
import type { openStore } from '../store/store';
import { readTrackedProducts } from '../store/trackedProducts';
import { createConnectivity, type Connectivity, type OnlineSource } from '../tabs/connectivity';
import { joinTabs } from '../tabs/joinTabs';
import { platformLocks, type LockManagerLike } from '../tabs/locks';
import { createSyncStatus } from '../tabs/syncStatus';
import { clearAndClose, type Lifetime } from './clearAndClose';
import { createDatabaseClaim } from './databaseClaim';
import type { EngineCore } from './engineCore';
import { createEngineSync } from './engineSync';
import { createItemRefreshes } from './itemRefreshes';
import { loadCouponValidator } from './loadCouponValidator';
import { loadNetwork, type NetworkStart } from './loadNetwork';
import { openEngineStore, type EngineStore } from './openEngineStore';
import { createWatchRegistry } from './watchRegistry';
import { ENGINE_DEFAULTS } from '../defaults';

/** Platform pieces and tuning the engine is given (tests pass fakes; the worker passes its globals). */
export interface EngineDeps {
  indexedDB?: IDBFactory | undefined;
  IDBKeyRange?: typeof IDBKeyRange | undefined;
  fetch?: typeof fetch | undefined;
  /** Asks the host for the till's token (the `token` option; in a worker, a Comlink proxy of the host's function). */
  askToken?: AskToken | undefined;
  now?: () => number;
  onlineSource?: OnlineSource;
  /** Retry policy of background sync work. */
  syncRetry?: RetryPolicy;
  /** Retry policy of lookups somebody is waiting for. */
  lookupRetry?: RetryPolicy;
  /** Web Locks for leader election and the sync lock; default navigator.locks, else a lock within this realm. */
  locks?: LockManagerLike;
  /** Opens the database (tests wrap it to inject storage failures). */
  openStore?: typeof openStore;
  /**
   * Every emission is copied on its way to the host (structured clone through Comlink), so watches of one list
   * may share one read of it. Set by the worker; in the host's own thread each watch reads its own copy.
   */
  copiesEmissions?: boolean;
}

/**
 * A till's engine resolves once the database is open (the shop's IndexedDB database, or one in memory where that
 * cannot be used: openEngineStore.ts). The network side and the checkout start loading then, not before: parsing
 * them while the database opens would delay the first answer after a reload (docs/performance.md, the reload
 * row). A storefront's (`coupons: 'byCode'` with tracked products) resolves at once: its first answer is
 * most often the network's, so its products' options are asked for first (answerWhileOpening.ts).
 * @example const engine = await createEngine({ baseUrl }, (id, value) => console.log(id, value), { indexedDB,
 * IDBKeyRange });
 */
export async function createEngine(
  options: EngineOptions,
  listener: WatchListener,
  deps: EngineDeps = {},
): Promise<EngineApi> {
  const dbName = options.dbName ?? defaultDbName(options.shopId);
  const productNos = options.coupons === 'byCode' ? (options.products ?? []) : [];
  if (productNos.length === 0)
    return assembleEngine(options, listener, deps, await openEngineStore(dbName, deps), earlyParts(deps));
  // a storefront (it tracks products, never lists coupons): usable at once, its products read beside the open
  const early = earlyParts(deps);
  const start = import('./createNetwork').then((module) =>
    module.startNetworkEarly(module, {
      options,
      fetch: fetchOf(deps),
      askToken: deps.askToken,
      connectivity: early.connectivity,
      signal: early.life.closing.signal,
      onServerDate: early.clock.sample,
      now: early.clock.now,
      productNos,
    }),
  );
  const assemble = (told: WatchListener) =>
    openEngineStore(dbName, deps).then((store) =>
      assembleEngine(options, told, deps, store, { ...early, network: start }),
    );
  // (the engine while its database opens comes with the network side, out of the worker's entry; without that
  // chunk the engine answers from the database alone, as a till's does)
  return start.then(
    ({ module, opening }) =>
      module.answerWhileOpening({ listener, productNos, opening, connectivity: early.connectivity, assemble }),
    () => assemble(listener),
  );
}

/**
 * What the engine has before its database is open: its clock, connectivity and lifetime (and a storefront's network
 * start).
 */
interface EarlyParts {
  clock: ServerClock;
  connectivity: Connectivity;
  life: Lifetime;
  network?: Promise<NetworkStart>;
}

const earlyParts = (deps: EngineDeps): EarlyParts => ({
  // the till's clock, corrected by the offset the API's (or relay's) answers show (serverClock.ts)
  clock: createServerClock(deps.now ?? Date.now),
  connectivity: createConnectivity(deps.onlineSource),
  life: { closed: false, closing: new AbortController() },
});

const fetchOf = (deps: EngineDeps): typeof fetch => deps.fetch ?? globalThis.fetch.bind(globalThis);

function assembleEngine(
  options: EngineOptions,
  listener: WatchListener,
  deps: EngineDeps,
  { db, memoryOnly }: EngineStore,
  early: EarlyParts,
): EngineApi {
  const { clock, connectivity, life } = early;
  const now = clock.now;
  // In memory, this engine is alone: its own leader, its own sync lock and tab channel (db.name is its own).
  const dbName = db.name;
  const changes = createStorageChanges(dbName);
  const cache = deps.copiesEmissions ? createReadCache(changes) : undefined;
  const locks = deps.locks ?? platformLocks();
  const resources = createResourceState(now, engineError);
  const status = createSyncStatus(connectivity);
  clock.subscribe((clockOffsetMs) => status.facts.set({ clockOffsetMs }));
  if (memoryOnly) status.facts.set({ storageError: memoryOnly, memoryOnly: true });
  // The parts refer to one another through arrows: each is called only once all are assembled.
  const tabs = joinTabs({
    locks,
    dbName,
    status,
    ownSync: () => load.current()?.runner.active === true,
    onCleared() {
      claim.forget();
      claim.reclaim();
    },
  });
  const core: EngineCore = {
    options,
    db,
    now,
    refreshIntervalMs: options.refreshIntervalMs ?? ENGINE_DEFAULTS.refreshIntervalMs,
    connectivity,
    resources,
    status,
    leadership: tabs.leadership,
    signal: life.closing.signal,
    isClosed: () => life.closed,
  };
  const claim = createDatabaseClaim({
    ...core,
    dbName,
    locks,
    onReclaim(claimed) {
      watches.restartAll();
      engineSync.allow(claimed);
      checkout.keepClock();
    },
  });
  const load = loadNetwork(
    {
      ...core,
      fetch: fetchOf(deps),
      askToken: deps.askToken,
      syncRetry: deps.syncRetry,
      lookupRetry: deps.lookupRetry,
      trackedProducts: () => readTrackedProducts(db),
      claim,
      resync: () => engineSync.sync().then((r) => r.ok),
      onReconnect: () => watches.refreshIfDue(),
      onServerDate: clock.sample,
      changes,
    },
    early.network,
  );
  const refreshes = createItemRefreshes({ ...core, network: load.network, sync: () => engineSync.sync() });
  const refreshLookup = (query: LookupQuery) => refreshes.refreshNow(planLookup(query, options.coupons));
  const checkout = loadCouponValidator({
    ...core,
    claim,
    memoryOnly,
    clock,
    refreshCoupon: (code) => refreshLookup({ kind: 'coupon', code }),
    refreshIssuedCoupon: (code) => refreshLookup({ kind: 'issuedCoupon', code }),
    refreshLookup,
    queryError,
    readTrackedProducts,
    // (a storefront's issued coupons are not its checkout's: it claims nothing)
    ...(options.coupons === 'byCode' ? {} : { claimUse: async (use) => (await load.network).claimUse(use) }),
  });
  const watches = createWatchRegistry({ ...core, claim, changes, cache, refresh: refreshes.refresh, listener });
  const engineSync = createEngineSync({ ...core, claim, network: load.network });
  return {
    watchFirst: watches.watchFirst,
    unwatch: watches.unwatch,
    activeWatches: () => watches.size,
    setPersisted: (persisted) => status.facts.set({ persisted }),
    setNetworkOnline: (online) => connectivity.setOnline(online),
    validateCoupon: checkout.validateCoupon,
    releaseCoupon: checkout.releaseCoupon,
    offlineJournal: checkout.offlineJournal,
    clearOfflineJournal: checkout.clearOfflineJournal,
    exportJournal: checkout.exportJournal,
    refresh: checkout.refresh,
    inspect: checkout.inspect,
    sync: () => engineSync.hostSync(),
    trackProducts: engineSync.trackProducts,
    prefetchIssuedCoupons: engineSync.prefetchIssuedCoupons,
    ...clearAndClose({
      life,
      db,
      load,
      refreshes,
      watches,
      engineSync,
      tabs,
      changes,
      cache,
      connectivity,
      checkout,
    }),
  };
}
