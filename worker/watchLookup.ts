// One subscribed lookup inside the engine: a Dexie liveQuery over the item and its confirmations, combined with
// the in-memory refresh state (fetching, error) and connectivity (offline). It answers from IndexedDB first and
// never waits on the network; a refresh, when due, runs beside it and its result arrives through the liveQuery.
import { liveQuery } from 'dexie';
import { toLookupError } from '../src/errors';
import type { LookupError, LookupResult } from '../src/types';
import type { Connectivity } from './connectivity';
import type { LookupPlan } from './lookupPlans';
import type { ResourceError, ResourceState } from './resourceState';
import { sameRecord } from './sameRecord';
import { latestConfirmation, type ShopDatabase } from './store';

/** Longest wait for the liveQuery after a refresh ended (it normally takes a few ms). */
const SETTLE_MS = 1000;

export interface WatchEnv {
  db: ShopDatabase;
  /** Resolves when the database may be read; with an error when it must not be (other shop, no storage). */
  ready: Promise<LookupError | null>;
  resources: ResourceState;
  connectivity: Connectivity;
  now: () => number;
  refreshIntervalMs: number;
  emit(result: LookupResult<unknown>): void;
  refresh(plan: LookupPlan): void;
}

interface Local {
  data: unknown;
  syncedAt: number | null;
  itemConfirmedAt: number | null;
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
  let subscription: { unsubscribe(): void } | null = null;

  function currentError(syncedAt: number | null): LookupError | null {
    if (readError) return readError;
    // a failure matters only if it is newer than the data it failed to refresh
    let latest: ResourceError | undefined;
    for (const key of plan.stateKeys) {
      const e = env.resources.errorOf(key);
      if (e && (syncedAt === null || e.at >= syncedAt) && (!latest || e.at > latest.at)) latest = e;
    }
    return latest?.error ?? null;
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
    const stale = local.syncedAt === null || t - local.syncedAt > env.refreshIntervalMs;
    const missing =
      plan.empty === null &&
      local.data === null &&
      (local.itemConfirmedAt === null || t - local.itemConfirmedAt > env.refreshIntervalMs);
    if (stale || missing) env.refresh(plan);
  }

  void env.ready.then((blocked) => {
    if (stopped) return;
    if (blocked) {
      readError = blocked;
      return emit(true);
    }
    let first = true;
    subscription = liveQuery(async () => {
      const [data, confirmations] = await Promise.all([plan.read(env.db), env.db.meta.bulkGet(plan.confirmKeys)]);
      const itemAt = confirmations[plan.confirmKeys.indexOf(plan.itemKey)];
      return {
        data: data ?? null,
        syncedAt: latestConfirmation(confirmations),
        itemConfirmedAt: latestConfirmation([itemAt]),
      };
    }).subscribe({
      next(value) {
        local = value;
        readError = null;
        settle();
        if (first) {
          // start a due refresh before the first emission, so that emission already says `fetching: true`
          first = false;
          quiet = true;
          refreshIfDue();
          quiet = false;
        }
        emit(true);
      },
      error(error) {
        const e = toLookupError(error);
        readError = { code: 'storage_error', message: `Local data could not be read (${e.message}).` };
        emit(true);
      },
    });
  });

  // When a refresh ends well, its confirmation write makes the liveQuery run again a moment later. Until then the
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
      subscription?.unsubscribe();
      stopState();
      stopConnectivity();
    },
  };
}
