// One sync at a time: coupons, then the options of every tracked product, from the source of this engine (the
// API listed page by page, or a relay's feed: syncSource.ts). A background caller who arrives mid-sync gets
// the running sync's promise (after dexie-cloud's syncIfPossible); the host's sync() (`freshAfter`) never gets one
// that had begun reading the data before it asked (that one may have read the API before a change the host knows
// of), but one more after it, as dexie-cloud's sync({ purpose: 'pull' }) does. Failures are data in the report and
// in status(), never thrown.
import { ShopLookupError } from '../../src/protocol';
import type { LookupError, SyncReport } from '../../src/protocol';
import { type ApiClient, retry, type RetryPolicy } from '@shop-lookup/shop-api';
import type { ResourceState } from '../lookups/resourceState';
import { engineError } from '../store/storageErrors';
import { createDirectListingSource } from './direct/directListingSource';
import { metaKey, type ShopDatabase, type ShopIdentity } from '../store/store';
import type { OpeningReads } from './openingReads';
import type { SyncContext } from './syncContext';
import { createReportDraft, failedReport, finishReport, type ReportDraft } from './syncReport';
import type { SourceRun, SyncSource } from './syncSource';
import type { SyncStatusState } from '../tabs/syncStatus';

export interface SyncOptions {
  /**
   * The host's sync(): `readsBegun` when it was called. A running sync that had begun reading by then is not
   * handed back; one more runs after it.
   */
  freshAfter?: number;
}

export interface SyncRunnerDeps {
  db: ShopDatabase;
  client: ApiClient;
  resources: ResourceState;
  status: SyncStatusState;
  now: () => number;
  policy: RetryPolicy;
  /** The products whose options a full sync lists (read when it starts). */
  trackedProducts: () => number[] | Promise<number[]>;
  /** The shop this engine serves (a sync checks it under the lock; its units check their writes too). */
  shop?: () => ShopIdentity | undefined;
  /** Runs a sync holding the database's sync lock, so engines in other tabs never sync at the same time. */
  exclusive?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Where the data comes from (the API listed page by page, or a relay's feed); default the direct listing. */
  source?: (signal: AbortSignal) => Promise<SyncSource>;
  /**
   * What status().source says for the source chosen (default its kind): a relay that lets this till read no feed (it
   * refuses the till, or opens only the API's routes) is synced from by the API's routes, and is still a relay.
   */
  shownSource?: (source: SyncSource) => SyncSource['kind'];
  /** A storefront's opening reads: the syncs of its start take them (no longer once the first sync ended). */
  opening?: OpeningReads | undefined;
}

/** Progress is told this often at most while a listing runs (a page can take a millisecond). */
const PROGRESS_MS = 100;

/** Errors after which the rest of this sync would only fail the same way. */
const STOPS_SYNC = new Set([
  'network_error',
  'timeout',
  'bad_credentials',
  'token_invalid',
  'permission_denied',
  'plan_permission',
  'closed',
  'cancelled',
]);

export function createSyncRunner(deps: SyncRunnerDeps) {
  const { db, resources, status, now } = deps;
  const exclusive = deps.exclusive ?? (<T>(work: () => Promise<T>) => work());
  let running: Promise<SyncReport> | null = null;
  /** The one fresh sync queued behind the running one (every host sync() meanwhile shares it). */
  let queued: Promise<SyncReport> | null = null;
  /** How many syncs have begun to read the data, and which of them the running one is (0: not reading yet). */
  let readsBegun = 0;
  let runningRead = 0;
  /** A full sync holds the lock and runs (not merely waits for its turn). */
  let active = false;
  let controller = new AbortController();

  let lastProgressAt = 0;
  /**
   * Units the shop's server refused (`forbidden`) since the start, by unit key: later syncs skip them (reported as
   * skipped) instead of asking again every few minutes; the host's sync() forgets them and asks once more.
   */
  const refused = new Map<string, LookupError>();
  let ranOnce = false;
  const tellRefused = () => status.facts.set({ refused: [...refused.values()] });

  function context(report: ReportDraft, signal: AbortSignal): SyncContext {
    return {
      db,
      client: deps.client,
      report,
      now,
      priority: 'background',
      signal,
      shop: deps.shop?.(),
      opening: deps.opening,
      call: (step) =>
        retry(step, deps.policy, {
          signal,
          onWait: (ms) => status.facts.set({ waiting: true, waitingUntil: now() + ms }),
          onResume: () => status.facts.set({ waiting: false, waitingUntil: null }),
        }),
      progress(resource, done, total) {
        // at most every PROGRESS_MS (and the last step): each update reaches every status watcher and every tab
        const t = Date.now();
        if (t - lastProgressAt < PROGRESS_MS && done !== total) return;
        lastProgressAt = t;
        status.facts.set({ progress: { resource, done, total } });
      },
    };
  }

  /** The report of a sync that never ran (its lock wait ended: the engine closed, or the shop changed). */
  const notRun = (error: unknown): SyncReport => failedReport(engineError(error));

  /** How many units a sync ran, and how many of them the shop's server refused (asked now, or skipped). */
  interface UnitTally {
    units: number;
    refused: number;
  }

  /** Runs one unit; returns false when the sync should stop here. */
  async function unit(report: ReportDraft, tally: UnitTally, key: string, work: () => Promise<void>): Promise<boolean> {
    tally.units++;
    const known = refused.get(key);
    if (known) {
      tally.refused++;
      report.skipped.push(known);
      return true;
    }
    try {
      await resources.track(key, work);
      return true;
    } catch (error) {
      const e = engineError(error);
      report.complete = false;
      report.errors.push(e);
      if (e.code === 'forbidden') {
        tally.refused++;
        refused.set(key, e);
        tellRefused();
      }
      return !STOPS_SYNC.has(e.code);
    }
  }

  /**
   * A sync every part of which the shop's server refused synced nothing: it is not ok, whether the refusals were
   * asked now or remembered (a refused part alone is skipped, and the rest of the sync may still be ok).
   */
  function refusedWhole(report: ReportDraft, tally: UnitTally): void {
    // (a refusal asked now is in the report's errors already, and the report is not ok)
    if (tally.units === 0 || tally.refused < tally.units || !report.complete) return;
    report.complete = false;
    report.errors.push({
      code: 'forbidden',
      message: `Nothing was synced: the shop's server refuses this client every part of a sync. ${report.skipped[0]!.message}`,
    });
  }

  const direct = createDirectListingSource(db, now);
  const chooseSource = deps.source ?? (() => Promise.resolve(direct));

  /** This sync's source; null (the failure in the report and on `coupons`) when it could not be found out. */
  async function sourceFor(report: ReportDraft, signal: AbortSignal): Promise<SyncSource | null> {
    try {
      const source = await chooseSource(signal);
      status.facts.set({ source: deps.shownSource?.(source) ?? source.kind });
      return source;
    } catch (error) {
      await unit(report, { units: 0, refused: 0 }, metaKey.coupons, () => Promise.reject(error));
      return null;
    }
  }

  /** @param ended called as the sync ends, before its outcome is told: a sync asked for after that is a new one */
  async function run(products: number[], ended: () => void): Promise<SyncReport> {
    const report = createReportDraft();
    const ctx = context(report, controller.signal);
    active = true;
    status.facts.set({ syncing: true, progress: { resource: 'coupons', done: 0, total: null } });
    const source = await sourceFor(report, controller.signal);
    const tally: UnitTally = { units: 0, refused: 0 };
    const unitRun: SourceRun = { ctx, unit: (key, work) => unit(report, tally, key, work) };
    runningRead = ++readsBegun;
    const optionsAt = source ? await source.syncAll(unitRun, products) : null;
    refusedWhole(report, tally);
    const coupons = (await db.meta.get(metaKey.coupons).catch(() => undefined)) as { confirmedAt?: number } | undefined;
    const f = status.facts.get();
    ended();
    deps.opening?.end(); // the start is over: what was read then is this sync's, and no later one's
    ranOnce = true; // (before the status change below, which wakes the relay's live long-poll)
    status.facts.set({
      syncing: false,
      waiting: false,
      waitingUntil: null,
      progress: null,
      failed: !report.complete,
      lastError: report.errors.at(-1) ?? (report.complete ? null : f.lastError),
      lastSyncedAt: {
        coupons: coupons?.confirmedAt ?? f.lastSyncedAt.coupons,
        options: optionsAt ?? f.lastSyncedAt.options,
      },
    });
    return finishReport(report);
  }

  function start(): Promise<SyncReport> {
    const done = () => {
      active = false;
      if (running === mine) running = null;
    };
    // waiting for the lock can end too (the engine closes meanwhile): that is a report, never a rejection
    const mine: Promise<SyncReport> = exclusive(async () => run(await deps.trackedProducts(), done))
      .catch(notRun)
      .finally(done);
    running = mine;
    runningRead = 0;
    return mine;
  }

  return {
    /**
     * Syncs everything. A caller who arrives mid-sync gets the running sync; with `freshAfter` (the host's sync(),
     * which must see the API as it was when it asked) only if that one began to read after the ask, else one more
     * sync after it, shared by every such caller until it starts.
     */
    sync(options: SyncOptions = {}): Promise<SyncReport> {
      if (!running) return start();
      const { freshAfter } = options;
      if (freshAfter === undefined || runningRead === 0 || runningRead > freshAfter) return running;
      queued ??= running.then(() => {
        queued = null;
        return running ?? start(); // (one begun since then is fresh enough)
      });
      return queued;
    },
    /** How many syncs have begun to read the data so far (the host's sync() notes it when it is called). */
    get readsBegun() {
      return readsBegun;
    },
    /** Syncs only these products' options (newly tracked ones), after any running sync. */
    async syncProducts(productNos: number[]): Promise<SyncReport> {
      await running?.catch(() => undefined);
      return exclusive(async () => {
        const report = createReportDraft();
        const ctx = context(report, controller.signal);
        const source = await sourceFor(report, controller.signal);
        await source?.syncProducts(
          { ctx, unit: (key, work) => unit(report, { units: 0, refused: 0 }, key, work) },
          productNos,
        );
        return finishReport(report);
      }).catch(notRun);
    },
    /** The host asked for a sync: what the server refused is asked once more (the host may have changed it). */
    forgetRefusals(): void {
      if (refused.size === 0) return;
      refused.clear();
      tellRefused();
    },
    /** A full sync has ended since the start (whatever its outcome): what the server refuses is known by then. */
    get ranOnce() {
      return ranOnce;
    },
    /** The unit `key` is refused ahead (the relay's discovery answer left its route out): skipped, never asked. */
    refuseAhead(key: string, error: LookupError): void {
      if (refused.has(key)) return;
      refused.set(key, error);
      tellRefused();
    },
    /** Whether the unit `key` was refused by the shop's server since the start (its work is skipped). */
    isRefused: (key: string): boolean => refused.has(key),
    /** A full sync of this engine is under way (it holds the sync lock); false while one only waits for it. */
    get active() {
      return active;
    },
    /** Aborts the running sync (its unfinished listing stays as a checkpoint) and waits for it to settle. */
    async cancel(): Promise<void> {
      controller.abort(new ShopLookupError('cancelled', 'The sync was cancelled (clear() or close() was called).'));
      await running?.catch(() => undefined);
      controller = new AbortController();
    },
  };
}
