// The engine: everything behind the six lookups, wired together. It runs in a Web Worker (worker.ts exposes it
// with Comlink) or, with `worker: false`, in the host's own thread. Platform pieces are passed in.
import { ShopLookupError, toLookupError } from '../src/errors';
import type { EngineApi, EngineOptions, LookupQuery, WatchListener, WatchQuery } from '../src/protocol';
import type { LookupError, SyncReport } from '../src/types';
import { createApiClient } from './apiClient';
import { createConnectivity, type OnlineSource } from './connectivity';
import { createTransport } from './httpTransport';
import { planLookup, type LookupPlan } from './lookupPlans';
import { createRateLimiter, DEFAULT_RATE_LIMITS } from './rateLimiter';
import { refreshIssuedCoupon } from './readThrough';
import { createResourceState } from './resourceState';
import { LOOKUP_RETRY, retry, SYNC_RETRY, type RetryPolicy } from './retryer';
import { checkShopIdentity, identityOf } from './shopIdentity';
import { metaKey, openStore } from './store';
import { createReportDraft, finishReport, type SyncContext } from './syncContext';
import { createSyncRunner } from './syncRunner';
import { createSyncStatus } from './syncStatus';
import { watchLookup, type Watch } from './watchLookup';

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
}

export const DEFAULT_REFRESH_INTERVAL_MS = 5 * 60 * 1000;
const PROBE_MIN_MS = 2_000;
const PROBE_MAX_MS = 60_000;

function queryError(q: LookupQuery): LookupError | null {
  const bad = (what: string, v: unknown) => ({ code: 'bad_request', message: `${what} must be ${v}.` });
  if ((q.kind === 'coupon' || q.kind === 'issuedCoupon') && (typeof q.code !== 'string' || q.code === '')) {
    return bad('A coupon code', 'a non-empty string');
  }
  if ('productNo' in q && !Number.isSafeInteger(q.productNo)) return bad('A product number', 'a whole number');
  if (q.kind === 'productOptionByNo' && !Number.isSafeInteger(q.optionNo)) return bad('An option number', 'a whole number');
  if (q.kind === 'productOptionByCode' && (typeof q.optionCode !== 'string' || q.optionCode === '')) {
    return bad('An option code', 'a non-empty string');
  }
  return null;
}

/** @example const engine = createEngine({ baseUrl }, (id, value) => console.log(id, value), { indexedDB, IDBKeyRange }); */
export function createEngine(options: EngineOptions, listener: WatchListener, deps: EngineDeps = {}): EngineApi {
  const now = deps.now ?? Date.now;
  const refreshIntervalMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS;
  const db = openStore(options.dbName ?? 'shop-lookup', deps);
  const connectivity = createConnectivity(deps.onlineSource);
  const closing = new AbortController();
  const limiter = createRateLimiter(options.rateLimits ?? DEFAULT_RATE_LIMITS);
  const fetchFn = deps.fetch ?? globalThis.fetch.bind(globalThis);
  const transport = createTransport({
    baseUrl: options.baseUrl,
    fetch: fetchFn,
    limiter,
    timeoutMs: options.requestTimeoutMs ?? 15_000,
    auth: options.auth,
    onAnswer: () => connectivity.reportAnswer(),
    onUnreachable: () => connectivity.reportUnreachable(),
    signal: closing.signal,
  });
  const client = createApiClient({ transport, pageSize: options.pageSize ?? 100 });
  const resources = createResourceState(now);
  const status = createSyncStatus(connectivity);
  const tracked = new Set(options.products ?? []);
  const runner = createSyncRunner({
    db,
    client,
    resources,
    status,
    now,
    policy: deps.syncRetry ?? { ...SYNC_RETRY, ...options.retry },
    trackedProducts: () => [...tracked],
  });
  const watches = new Map<number, { query: WatchQuery; watch: Watch | null; stop: () => void }>();
  const inflight = new Map<string, Promise<void>>();
  let closed = false;
  let probeDelay = PROBE_MIN_MS;
  let probeTimer: ReturnType<typeof setTimeout> | undefined;

  const claim = () =>
    identityOf(options.baseUrl, options.auth)
      .then((id) => checkShopIdentity(db, id))
      .catch((e: unknown) => ({ code: 'storage_error', message: `The local database could not be opened (${toLookupError(e).message}).` }));
  let ready = claim();

  function userContext(): SyncContext {
    const report = createReportDraft();
    const policy = deps.lookupRetry ?? LOOKUP_RETRY;
    return { db, client, report, now, priority: 'user', signal: closing.signal, call: (step) => retry(step, policy, { signal: closing.signal }) };
  }

  /** A lookup's refresh; concurrent lookups of the same item share one request. */
  function refresh(plan: LookupPlan): void {
    if (plan.refresh === 'sync') return void sync();
    const key = plan.stateKeys[0]!;
    if (closed || inflight.has(key)) return;
    const work = plan.refresh;
    const run = resources
      .track(key, () => work(userContext()))
      .catch(() => undefined)
      .finally(() => inflight.delete(key));
    inflight.set(key, run);
  }

  function startWatch(id: number, query: WatchQuery): { watch: Watch | null; stop: () => void } {
    if (query.kind === 'status') {
      const emit = () => listener(id, status.get());
      emit();
      return { watch: null, stop: status.subscribe(emit) };
    }
    const invalid = queryError(query);
    const plan = planLookup(query);
    const watch = watchLookup(plan, {
      db,
      ready: invalid ? Promise.resolve(invalid) : ready,
      resources,
      connectivity,
      now,
      refreshIntervalMs,
      emit: (result) => listener(id, result),
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
    const report = await runner.sync();
    scheduleProbe(report);
    return report;
  }

  // While the API cannot be reached, try again with growing pauses; the first answer ends it.
  function scheduleProbe(report: SyncReport): void {
    clearTimeout(probeTimer);
    if (closed || report.ok || !connectivity.get().online || connectivity.get().reachable) {
      probeDelay = PROBE_MIN_MS;
      return;
    }
    probeTimer = setTimeout(() => void sync(), probeDelay);
    probeDelay = Math.min(PROBE_MAX_MS, probeDelay * 2);
  }

  // Coming back (network event, or the API answering again): sync once and refresh what is on screen.
  let wasOffline = connectivity.offline;
  const stopReconnect = connectivity.subscribe(() => {
    const offline = connectivity.offline;
    if (wasOffline && !offline && !closed) {
      void sync();
      for (const w of watches.values()) w.watch?.refreshIfDue();
    }
    wasOffline = offline;
  });

  const timer = setInterval(() => {
    if (!connectivity.offline) void sync();
  }, refreshIntervalMs);
  void ready.then((blocked) => {
    if (!blocked && !closed && !connectivity.offline) void sync();
  });

  return {
    watch(id, query) {
      if (closed) return;
      watches.get(id)?.stop();
      watches.set(id, { query, ...startWatch(id, query) });
    },
    unwatch(id) {
      watches.get(id)?.stop();
      watches.delete(id);
    },
    activeWatches: () => watches.size,
    sync,
    async trackProducts(productNos) {
      const added = productNos.filter((p) => Number.isSafeInteger(p) && !tracked.has(p));
      for (const p of added) tracked.add(p);
      if (added.length > 0 && !connectivity.offline && !(await ready)) await runner.syncProducts(added);
    },
    async prefetchIssuedCoupons(codes) {
      const ctx = userContext();
      const policy = deps.syncRetry ?? { ...SYNC_RETRY, ...options.retry };
      ctx.call = (step) => retry(step, policy, { signal: closing.signal });
      ctx.priority = 'background';
      for (const code of codes) {
        try {
          await resources.track(metaKey.issued(code), () => refreshIssuedCoupon(ctx, code));
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
      await runner.cancel();
      await Promise.all(inflight.values());
      await db.transaction('rw', db.tables, () => Promise.all(db.tables.map((t) => t.clear())));
      resources.clear();
      status.facts.set({ lastSyncedAt: { coupons: null, options: null }, lastError: null, failed: false });
      // the emptied database may now be claimed by this shop; restart every watch against it
      ready = claim();
      for (const [id, w] of watches) {
        w.stop();
        watches.set(id, { query: w.query, ...startWatch(id, w.query) });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      clearTimeout(probeTimer);
      stopReconnect();
      for (const w of watches.values()) w.stop();
      watches.clear();
      closing.abort(new ShopLookupError('closed', 'shop-lookup was closed.'));
      limiter.dispose();
      await runner.cancel();
      await Promise.all(inflight.values());
      connectivity.dispose();
      db.close();
    },
  };
}
