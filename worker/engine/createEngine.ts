// The engine: everything behind the six lookups, wired together. It runs in a Web Worker (worker.ts exposes it
// with Comlink) or, with `worker: false`, in the host's own thread. Platform pieces are passed in.
import { ShopLookupError, toLookupError } from '../../src/protocol';
import type { EngineApi, EngineOptions, LookupError, LookupResult, SyncReport, SyncStatus, WatchListener, WatchQuery } from '../../src/protocol';
import { createConnectivity, type OnlineSource } from '../tabs/connectivity';
import { FEED_STATE_KEY, type FeedState } from '../sync/relay/feedState';
import { electLeader } from '../tabs/leadership';
import { platformLocks, type LockManagerLike } from '../tabs/locks';
import { queryError } from '../lookups/queryError';
import { planLookup, type LookupPlan, type NetworkModule } from '../lookups/lookupPlans';
import type { Network } from './createNetwork';
import { createResourceState } from '../lookups/resourceState';
import { createReadCache } from '../store/readCache';
import { createStorageChanges } from '../store/storageChanges';
import type { RetryPolicy } from '../api/retryer';
import { checkShopIdentity, defaultDbName, identityOf } from '../store/shopIdentity';
import { engineError, storageError } from '../store/storageErrors';
import { metaKey, openStore, type Confirmation, type ShopIdentity } from '../store/store';
import { createReportDraft, finishReport } from '../sync/syncContext';
import { createSyncScheduler } from '../sync/syncScheduler';
import { shareSyncStatus } from '../tabs/shareSyncStatus';
import { createSyncStatus } from '../tabs/syncStatus';
import { addTrackedProducts, readTrackedProducts } from '../store/trackedProducts';
import type { CouponValidator } from '../coupon/validateCoupon';
import { watchLookup, type Watch } from '../lookups/watchLookup';

/** Platform pieces and tuning the engine is given (tests pass fakes; the worker passes its globals). */
export interface EngineDeps {
  indexedDB?: IDBFactory | undefined;
  IDBKeyRange?: typeof IDBKeyRange | undefined;
  fetch?: typeof fetch | undefined;
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

export const DEFAULT_REFRESH_INTERVAL_MS = 5 * 60 * 1000;

/** @example const engine = createEngine({ baseUrl }, (id, value) => console.log(id, value), { indexedDB, IDBKeyRange }); */
export function createEngine(options: EngineOptions, listener: WatchListener, deps: EngineDeps = {}): EngineApi {
  const now = deps.now ?? Date.now;
  const refreshIntervalMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS;
  const dbName = options.dbName ?? defaultDbName(options.shopId);
  const db = (deps.openStore ?? openStore)(dbName, deps);
  const syncLock = `shop-lookup:${dbName}:sync`;
  const changes = createStorageChanges(dbName);
  const cache = deps.copiesEmissions ? createReadCache(changes) : undefined;
  const locks = deps.locks ?? platformLocks();
  const connectivity = createConnectivity(deps.onlineSource);
  const closing = new AbortController();
  let closed = false;
  const fetchFn = deps.fetch ?? globalThis.fetch.bind(globalThis);
  const resources = createResourceState(now, engineError);
  const status = createSyncStatus(connectivity);
  const leadership = electLeader(locks, `shop-lookup:${dbName}:leader`);
  const stopLeaderFact = leadership.subscribe((leader) => status.facts.set({ leader }));
  status.facts.set({ leader: leadership.isLeader });

  // What the syncs do, told between the engines on this database (other tabs); clear() too.
  let net: Network | null = null;
  const shared = shareSyncStatus({
    name: `shop-lookup:${dbName}`,
    status,
    ownSync: () => net?.runner.active === true,
    onCleared() {
      forget();
      reclaim();
    },
  });

  // Storage events: Dexie reopens the connection on next use; say what happened. Dexie also signals 'close' for
  // the closes it makes itself (ours, and the one a versionchange asks for): those are not news.
  let expectedClose = false;
  db.on('versionchange', () => {
    expectedClose = true;
    setTimeout(() => (expectedClose = false), 0);
    status.facts.set({ lastError: storageError({ name: 'VersionError' }) });
  });
  db.on('close', () => {
    if (expectedClose || closed) return;
    status.facts.set({ lastError: storageError({ name: 'DatabaseClosedError' }) });
  });

  // the products this engine was asked to track: added to the shop-wide set (trackedProducts.ts) once the database
  // is claimed, and again after clear()
  const ownProducts = new Set(options.products ?? []);
  // The network side and the checkout rules load apart from the entry (network.ts), starting now: the first
  // answer from IndexedDB does not wait for them, and they are in memory well before an offline checkout.
  const network: Promise<Network & { module: NetworkModule }> = import('./createNetwork').then((module) => ({
    module,
    ...module.createNetwork({
      options,
      db,
      fetch: fetchFn,
      now,
      connectivity,
      resources,
      status,
      signal: closing.signal,
      syncRetry: deps.syncRetry,
      lookupRetry: deps.lookupRetry,
      trackedProducts: () => readTrackedProducts(db),
      shop: () => shop,
      // Every sync holds the sync lock, and checks under it whose the database is: another tab may have cleared
      // it meanwhile, and another shop claimed it. Then nothing of this shop is written there.
      exclusive: (work) =>
        locks.request(syncLock, { signal: closing.signal }, async () => {
          const blocked = await claim();
          if (blocked) {
            reclaim();
            throw new ShopLookupError(blocked.code, blocked.message);
          }
          return work();
        }),
    }),
  }));
  network.then((n) => (net = n), () => undefined); // a failure is reported by whatever needs it
  // Is baseUrl a relay? Asked once at start (cached; asked again by the next sync if no answer came). With a relay,
  // the leader keeps a long-poll open for live changes (relayLive.ts).
  const live = network.then((net) => {
    net.chooser.choose(closing.signal).then((c) => status.facts.set({ source: c.kind }), () => undefined);
    return net.module.startRelayLive({
      poll: (waitS, signal) => net.relay.poll(waitS, signal),
      isRelay: () => net.chooser.current === 'relay',
      resync: () => sync().then((r) => r.ok),
      leadership,
      connectivity,
      onChange: (l) => status.facts.subscribe(l),
      signal: closing.signal,
    });
  });
  live.catch(() => undefined);
  /** A report for a sync that could not even start (its code failed to load). */
  const notStarted = (error: unknown): SyncReport => {
    const report = createReportDraft();
    report.complete = false;
    report.errors.push(toLookupError(error));
    return finishReport(report);
  };
  const watches = new Map<number, { query: WatchQuery; watch: Watch | null; stop: () => void }>();
  const inflight = new Map<string, Promise<void>>();

  const identity = identityOf(options.baseUrl, options.auth, options.shopId);
  let shop: ShopIdentity | undefined;
  identity.then((i) => (shop = i), () => undefined);
  const claim = () =>
    identity
      .then((id) => checkShopIdentity(db, id))
      .then(async (blocked) => {
        if (!blocked) await addTrackedProducts(db, [...ownProducts]);
        return blocked;
      })
      .catch((e: unknown) =>
        (e as { code?: unknown }).code === 'bad_options'
          ? toLookupError(e)
          : (storageError(e) ?? { code: 'storage_error', message: `The local database could not be opened (${toLookupError(e).message}).` }),
      );
  let ready = claim();
  /** Tells what the claim found: the refusal, or what earlier syncs (this tab's or another's) achieved. */
  const tellClaim = (claimed: Promise<LookupError | null>) =>
    void claimed.then(async (blocked) => {
      if (blocked) return status.facts.set({ lastError: blocked, failed: true });
      const [coupons, opts, feed] = (await db.meta.bulkGet([metaKey.coupons, 'options', FEED_STATE_KEY]).catch(() => [])) as (Confirmation | undefined)[];
      const f = status.facts.get();
      status.facts.set({
        lastSyncedAt: { coupons: f.lastSyncedAt.coupons ?? coupons?.confirmedAt ?? null, options: f.lastSyncedAt.options ?? opts?.confirmedAt ?? null },
      });
    });
  tellClaim(ready);


  /** Drops what this engine knew of the data (the database was emptied). */
  function forget(): void {
    resources.clear();
    status.facts.set({ lastSyncedAt: { coupons: null, options: null }, lastError: null, failed: false });
  }

  /**
   * Checks again whose the database is (after a clear() here or in another tab, or a refusal found under the sync
   * lock): every watch restarts against the answer, and background sync resumes if it may.
   */
  function reclaim(claimed: Promise<LookupError | null> = claim()): void {
    if (closed) return;
    ready = claimed;
    tellClaim(claimed);
    for (const [id, w] of watches) follow(id, w.query);
    scheduler.allow(claimed.then((blocked) => !blocked));
  }

  /** Waits for the shop identity check; throws when this database must not be used (another shop's, no storage). */
  async function usable(): Promise<void> {
    const blocked = await ready;
    if (blocked) throw new ShopLookupError(blocked.code, blocked.message);
  }

  /** Refreshes one lookup's data now; concurrent refreshes of the same item share one request. Rejects on failure. */
  function refreshNow(plan: LookupPlan): Promise<void> {
    if (plan.refresh === 'sync') return sync().then(() => undefined);
    const key = plan.stateKeys[0]!;
    if (closed) return Promise.reject(new ShopLookupError('closed', 'shop-lookup was closed.'));
    const running = inflight.get(key);
    if (running) return running;
    const work = plan.refresh;
    const run = resources.track(key, async () => {
      const net = await network;
      return work(net.userContext(), net.module);
    }).finally(() => inflight.delete(key));
    inflight.set(key, run);
    return run;
  }

  /** A lookup's refresh in the background: its outcome arrives through the liveQuery and the resource state. */
  function refresh(plan: LookupPlan): void {
    // the full listing is the leader's job; other engines see its results through the shared database
    if (plan.refresh === 'sync' && !leadership.isLeader) return;
    refreshNow(plan).catch(() => undefined);
  }

  const validator: Promise<CouponValidator> = import('../coupon/validateCoupon').then((m) =>
    m.createCouponValidator({
      db,
      now,
      isOffline: () => connectivity.offline,
      refreshCoupon: (code) => refreshNow(planLookup({ kind: 'coupon', code })),
      refreshIssuedCoupon: (code) => refreshNow(planLookup({ kind: 'issuedCoupon', code })),
      options: {
        couponPolicy: options.couponPolicy,
        timeZone: options.timeZone,
        maxDataAgeMs: options.maxDataAgeMs,
        refreshIntervalMs,
      },
    }),
  );
  validator.catch(() => undefined); // reported by validateCoupon

  type Emit = (value: LookupResult<unknown> | SyncStatus) => void;

  function startWatch(query: WatchQuery, emit: Emit): { watch: Watch | null; stop: () => void } {
    if (query.kind === 'status') {
      const tell = () => emit(status.get());
      tell();
      return { watch: null, stop: status.subscribe(tell) };
    }
    const invalid = queryError(query);
    const plan = planLookup(query);
    const watch = watchLookup(plan, {
      db,
      ready: invalid ? Promise.resolve(invalid) : ready,
      resources,
      changes,
      cache,
      connectivity,
      now,
      refreshIntervalMs,
      emit,
      refresh,
    });
    return { watch, stop: () => watch.stop() };
  }

  async function sync(): Promise<SyncReport> {
    const blocked = await ready;
    if (blocked || closed) {
      const report = createReportDraft();
      report.complete = false;
      report.errors.push(blocked ?? { code: 'closed', message: 'shop-lookup was closed.' });
      return finishReport(report);
    }
    return scheduler.sync();
  }

  const scheduler = createSyncScheduler({
    sync: () => network.then((n) => n.runner.sync(), notStarted),
    async isDue() {
      const [coupons, checkpoint, feed] = await db.meta.bulkGet([metaKey.coupons, metaKey.couponSync, FEED_STATE_KEY]);
      const at = (coupons as Confirmation | undefined)?.confirmedAt;
      const snapshotUnderWay = (feed as FeedState | undefined)?.snapshot;
      return checkpoint !== undefined || !!snapshotUnderWay || at === undefined || now() - at > refreshIntervalMs;
    },
    ready: ready.then((blocked) => !blocked),
    connectivity,
    leadership,
    refreshIntervalMs,
    // back online: refresh what is on screen (the leader also syncs)
    onReconnect: () => {
      for (const w of watches.values()) w.watch?.refreshIfDue();
    },
  });

  /** Emits to the listener; with `first`, the first emission goes there instead (watchFirst's answer). */
  function follow(id: number, query: WatchQuery, first?: (value: LookupResult<unknown> | SyncStatus | null) => void) {
    let answer = first;
    const emit: Emit = (value) => {
      if (!answer) return listener(id, value);
      answer(value);
      answer = undefined;
    };
    watches.get(id)?.stop();
    const w = startWatch(query, emit);
    watches.set(id, {
      query,
      watch: w.watch,
      stop() {
        w.stop();
        answer?.(null);
        answer = undefined;
      },
    });
  }

  return {
    watch(id, query) {
      if (closed) return;
      follow(id, query);
    },
    watchFirst(id, query) {
      if (closed) return Promise.resolve(null);
      return new Promise((resolve) => follow(id, query, resolve));
    },
    unwatch(id) {
      watches.get(id)?.stop();
      watches.delete(id);
    },
    activeWatches: () => watches.size,
    setPersisted: (persisted) => status.facts.set({ persisted }),
    setNetworkOnline: (online) => connectivity.setOnline(online),
    validateCoupon: async (code, order) => {
      await usable();
      return (await validator).validate(code, order);
    },
    offlineJournal: async () => {
      await usable();
      return (await validator).journal();
    },
    clearOfflineJournal: async (throughId) => {
      await usable();
      return (await validator).clearJournal(throughId);
    },
    sync,
    async trackProducts(productNos) {
      await usable();
      for (const p of productNos) if (Number.isSafeInteger(p)) ownProducts.add(p);
      // shop-wide: the leader's syncs list them from now on, whichever tab asked; new ones are fetched now
      const added = await addTrackedProducts(db, productNos);
      if (added.length > 0 && !connectivity.offline) await (await network).runner.syncProducts(added);
    },
    async prefetchIssuedCoupons(codes) {
      const blocked = await ready;
      if (blocked) return notStarted(blocked);
      let net: Awaited<typeof network>;
      try {
        net = await network;
      } catch (error) {
        return notStarted(error);
      }
      const ctx = net.backgroundContext();
      for (const code of codes) {
        try {
          await resources.track(metaKey.issued(code), () => net.module.refreshIssuedCoupon(ctx, code));
        } catch (error) {
          ctx.report.complete = false;
          const e = toLookupError(error);
          if (e.code !== 'invalid_record') ctx.report.errors.push(e);
          if (e.code === 'network_error' || e.code === 'closed') break;
        }
      }
      return finishReport(ctx.report);
    },
    async clear() {
      await network.then((n) => n.runner.cancel(), () => undefined);
      await Promise.allSettled(inflight.values());
      // Under the sync lock: no sync of any tab is between two pages while the tables are emptied and claimed
      // again (a sync in another tab ends first; the ones after it check the claim).
      const blocked = await locks.request(syncLock, { signal: closing.signal }, async () => {
        await db.transaction('rw', db.tables, () => Promise.all(db.tables.map((t) => t.clear())));
        forget();
        return claim(); // the emptied database may now be claimed by this shop
      });
      reclaim(Promise.resolve(blocked));
      shared.cleared();
    },
    async close() {
      if (closed) return;
      closed = true;
      scheduler.dispose();
      void live.then((l) => l.dispose(), () => undefined);
      leadership.dispose();
      stopLeaderFact();
      shared.dispose();
      for (const w of watches.values()) w.stop();
      watches.clear();
      cache?.dispose();
      changes.dispose();
      closing.abort(new ShopLookupError('closed', 'shop-lookup was closed.'));
      await network.then(
        (n) => {
          n.limiter.dispose();
          return n.runner.cancel();
        },
        () => undefined,
      );
      await Promise.allSettled(inflight.values());
      connectivity.dispose();
      db.close();
    },
  };
}
