// One subscribed lookup inside the engine: the item and its confirmations read from IndexedDB (one transaction),
// read again whenever a committed write touches them (storageChanges: Dexie's mutation events, as a liveQuery
// uses them, without a query of its own at the start), combined with the in-memory refresh state (fetching,
// error) and connectivity (offline). It answers from IndexedDB first and never waits on the network; a refresh,
// when due, runs beside it and its result arrives through that re-read.
import { toLookupError } from '../../src/protocol';
import type { LookupError, LookupResult } from '../../src/protocol';
import type { Connectivity } from '../tabs/connectivity';
import type { LookupPlan } from './lookupPlans';
import type { ResourceError, ResourceState } from './resourceState';
import type { ReadCache } from '../store/readCache';
import { sameRecord } from '@shop-lookup/shop-api';
import { readLocal, sameLocal, type Local } from './readLocal';
import { keysOf, type Interest, type StorageChanges } from '../store/storageChanges';
import type { ShopDatabase } from '../store/store';
import { olderThan } from '../store/dataAge';

/** Longest wait for the re-read after a refresh ended (it normally takes a few ms). */
const SETTLE_MS = 1000;
/** A read slower than this (a long list) waits as long again before the next: writes in a row coalesce. */
const SLOW_READ_MS = 16;

export interface WatchEnv {
  db: ShopDatabase;
  /** Resolves when the database may be read; with an error when it must not be (other shop, no storage). */
  ready: Promise<LookupError | null>;
  resources: ResourceState;
  /** Committed writes, to know when to read again. */
  changes: StorageChanges;
  /** Shared reads of lists; only where each emission is copied on its way out (the worker), else absent. */
  cache?: ReadCache | undefined;
  connectivity: Connectivity;
  now: () => number;
  refreshIntervalMs: number;
  emit(result: LookupResult<unknown>): void;
  refresh(plan: LookupPlan): void;
}

export interface Watch {
  /** Starts a refresh if the local data is missing or older than the refresh interval (and we are online). */
  refreshIfDue(): void;
  stop(): void;
}

/** @example const w = watchLookup(planLookup({ kind: 'coupon', code }), env); ...; w.stop(); */
export function watchLookup(plan: LookupPlan, env: WatchEnv): Watch {
  let local: Local | null = null;
  let readError: LookupError | null = null;
  let last: LookupResult<unknown> | null = null;
  let stopped = false;
  /** Set while a refresh starts, so its state change does not emit ahead of the first answer. */
  let quiet = false;
  let stopChanges: (() => void) | null = null;

  function currentError(syncedAt: number | null): LookupError | null {
    if (readError) return readError;
    // a failure matters only if it is newer than the data it failed to refresh
    let latest: ResourceError | undefined;
    for (const key of plan.stateKeys) {
      const e = env.resources.errorOf(key);
      if (e && (syncedAt === null || e.at >= syncedAt) && (!latest || e.at > latest.at)) latest = e;
    }
    // the copy shown is confirmed by nothing: its newer record could not be read
    return latest?.error ?? (local?.unreadable ? { code: 'invalid_record', message: local.unreadable } : null);
  }

  function emit(dataChanged: boolean): void {
    if (stopped || quiet || (local === null && readError === null)) return;
    const syncedAt = local?.syncedAt ?? null;
    const result: LookupResult<unknown> = {
      data: local?.data ?? plan.empty,
      syncedAt,
      fetching: plan.stateKeys.some((k) => env.resources.isFetching(k)),
      offline: env.connectivity.offline,
      error: currentError(syncedAt),
    };
    const same =
      last !== null &&
      last.syncedAt === result.syncedAt &&
      last.fetching === result.fetching &&
      last.offline === result.offline &&
      sameRecord(last.error, result.error);
    if (!dataChanged && same) return;
    last = result;
    env.emit(result);
  }

  function refreshIfDue(): void {
    if (stopped || local === null || env.connectivity.offline) return;
    const t = env.now();
    const stale = olderThan(local.syncedAt, t, env.refreshIntervalMs);
    const missing =
      plan.empty === null && local.data === null && olderThan(local.itemConfirmedAt, t, env.refreshIntervalMs);
    if (stale || missing) env.refresh(plan);
  }

  function onLocal(value: Local, first: boolean): void {
    local = value;
    readError = null;
    settle();
    if (first) {
      // start a due refresh before the first emission, so that emission already says `fetching: true`
      quiet = true;
      refreshIfDue();
      quiet = false;
    }
    emit(true);
  }

  function onReadError(error: unknown): void {
    const e = toLookupError(error);
    readError = { code: 'storage_error', message: `Local data could not be read (${e.message}).` };
    emit(true);
  }

  // One read at a time; a write committed meanwhile asks for one more after it (writes coalesce into it). A slow
  // read (all coupons while a sync writes page after page) leaves the engine as much time again before the next.
  const interest: Interest = { ...plan.interest, meta: keysOf(...plan.confirmKeys) };
  const load = () => readLocal(plan, env.db);
  let reading = false;
  let again = false;
  let pause: ReturnType<typeof setTimeout> | undefined;
  function read(): void {
    if (stopped) return;
    if (reading || pause !== undefined) {
      again = true;
      return;
    }
    reading = true;
    again = false;
    const started = Date.now();
    const next = () => {
      reading = false;
      const took = Date.now() - started;
      if (!again || stopped) return;
      if (took < SLOW_READ_MS) return read();
      pause = setTimeout(() => {
        pause = undefined;
        read();
      }, took);
    };
    (env.cache && plan.cacheKey ? env.cache.read(plan.cacheKey, interest, load) : load()).then(
      (value) => {
        if (!stopped) {
          if (local === null || readError !== null || !sameLocal(local, value)) onLocal(value, local === null);
          else if (settleTimer !== undefined) {
            // nothing new after all: release an emission held for it
            settle();
            emit(false);
          }
        }
        next();
      },
      (error: unknown) => {
        if (!stopped) onReadError(error);
        next();
      },
    );
  }

  const release = plan.cacheKey ? env.cache?.hold(plan.cacheKey) : undefined;
  void env.ready.then((blocked) => {
    if (stopped) return;
    if (blocked) {
      readError = blocked;
      return emit(true);
    }
    // listen before the first read, so that a write committed while it runs is read too
    stopChanges = env.changes.watch(interest, read);
    read();
  });

  // When a refresh ends well, its confirmation write makes the watch read again a moment later. Until then the
  // old data would be shown as "done": hold that emission for the new data (a failure is shown at once).
  let wasFetching = false;
  let settleTimer: ReturnType<typeof setTimeout> | undefined;
  const settle = () => {
    clearTimeout(settleTimer);
    settleTimer = undefined;
  };
  const stopState = env.resources.subscribe((key) => {
    if (!plan.stateKeys.includes(key)) return;
    const fetching = plan.stateKeys.some((k) => env.resources.isFetching(k));
    const failed = env.resources.errorOf(key) !== undefined && env.resources.errorOf(key)!.at >= (local?.syncedAt ?? 0);
    if (wasFetching && !fetching && !failed && local !== null) {
      wasFetching = false;
      settle();
      settleTimer = setTimeout(() => {
        settleTimer = undefined;
        emit(false);
      }, SETTLE_MS);
      return;
    }
    wasFetching = fetching;
    settle();
    emit(false);
  });
  const stopConnectivity = env.connectivity.subscribe(() => emit(false));

  return {
    refreshIfDue,
    stop() {
      stopped = true;
      settle();
      clearTimeout(pause);
      stopChanges?.();
      release?.();
      stopState();
      stopConnectivity();
    },
  };
}
