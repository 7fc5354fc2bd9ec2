// When the engine syncs by itself: at start, every refreshIntervalMs, once on reconnect, on taking over from a
// closed leader, and after any failed sync with growing pauses (2 s ... 60 s) until one succeeds. Only the leader
// (one engine per database across tabs) schedules syncs; every engine refreshes its own on-screen lookups on reconnect.
import type { SyncReport } from '../../src/protocol';
import type { SyncOptions } from './syncRunner';
import { olderThan } from '../store/dataAge';
import { FEED_STATE_KEY, type FeedState } from '../store/feedState';
import { metaKey, type Confirmation, type ShopDatabase } from '../store/store';
import type { Connectivity } from '../tabs/connectivity';
import type { Leadership } from '../tabs/leadership';

export interface SyncSchedulerDeps {
  sync(options?: SyncOptions): Promise<SyncReport>;
  /** Whether the data is old enough (or a listing was left unfinished) to sync now. */
  isDue(): Promise<boolean>;
  /** Resolves when syncing may start at all (false: never, e.g. another shop's database). */
  ready: Promise<boolean>;
  connectivity: Connectivity;
  leadership: Leadership;
  refreshIntervalMs: number;
  /** Called on every return from offline (all engines, leader or not). */
  onReconnect(): void;
  /**
   * The backoff of retries after a failed sync: the first pause, doubled each time up to the last. Default 2 s, 60 s.
   */
  probeMinMs?: number;
  probeMaxMs?: number;
}

export interface SyncScheduler {
  /** A sync asked for by the host (any engine may run one; the sync lock keeps them apart). */
  sync(options?: SyncOptions): Promise<SyncReport>;
  /** The database was claimed again (after clear()): syncing may start once `ready` says so, as at start. */
  allow(ready: Promise<boolean>): void;
  dispose(): void;
}

/**
 * Whether a sync is due: the coupons were never confirmed or not for `refreshIntervalMs`, or a listing or a relay
 * snapshot was left unfinished (resuming it is due at once). `listKey`: the confirmation a sync renews (`'options'`
 * for an engine that never lists coupons).
 * @example await isSyncDue(db, Date.now(), 300_000)
 */
export async function isSyncDue(
  db: ShopDatabase,
  now: number,
  refreshIntervalMs: number,
  listKey: string = metaKey.coupons,
): Promise<boolean> {
  const [coupons, checkpoint, feed] = await db.meta.bulkGet([listKey, metaKey.couponSync, FEED_STATE_KEY]);
  const at = (coupons as Confirmation | undefined)?.confirmedAt;
  const snapshotUnderWay = (feed as FeedState | undefined)?.snapshot;
  return checkpoint !== undefined || !!snapshotUnderWay || olderThan(at, now, refreshIntervalMs);
}

/**
 * @example const scheduler = createSyncScheduler({ sync, isDue, ready, connectivity, leadership, refreshIntervalMs,
 * onReconnect });
 */
export function createSyncScheduler(deps: SyncSchedulerDeps): SyncScheduler {
  const { connectivity, leadership } = deps;
  const retryMin = deps.probeMinMs ?? 2_000;
  const retryMax = deps.probeMaxMs ?? 60_000;
  let disposed = false;
  let allowed = false;
  let retryDelay = retryMin;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let syncing = 0;

  // Only the leader syncs by itself, and not while the platform says there is no network at all (its `online`
  // event resumes). An API we could not reach is no reason to wait: trying again is how we find out it is back.
  const canSync = () => !disposed && allowed && leadership.isLeader && connectivity.get().online;

  function stopRetrying(): void {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    retryDelay = retryMin;
  }

  /** Tries again after the pause the backoff has come to (2 s, 4 s, ... 60 s; each retry that runs doubles it). */
  function retryLater(): void {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    if (disposed) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      retryDelay = Math.min(retryMax, retryDelay * 2);
      void run();
    }, retryDelay);
  }

  // Every failed sync, whatever the reason (no answer, 5xx, a relay not ready yet), is tried again with growing
  // pauses until one succeeds: the first failure starts it, so a till switched on before its network or API is up
  // syncs as soon as they are. (A relay not ready yet is also waited for by the live long-poll, relayLive.ts, which
  // takes its data the moment it has it.) Callers who joined a running sync get the same report: it counts once.
  let lastReport: SyncReport | null = null;
  function afterSync(report: SyncReport): void {
    if (report === lastReport) return;
    lastReport = report;
    if (report.ok || !leadership.isLeader) stopRetrying();
    else retryLater();
  }

  async function syncNow(options?: SyncOptions): Promise<SyncReport> {
    syncing++;
    clearTimeout(retryTimer); // this sync is the retry
    retryTimer = undefined;
    try {
      const report = await deps.sync(options);
      if (!disposed) afterSync(report);
      return report;
    } finally {
      syncing--;
    }
  }

  async function run(): Promise<void> {
    if (canSync()) await syncNow(); // (joins a running sync: any sync refreshes the data)
  }

  async function runIfDue(): Promise<void> {
    if (canSync() && (await deps.isDue())) await run();
  }

  // the latest claim decides (an earlier one may settle later)
  let claim: Promise<boolean> | null = null;
  function allow(ready: Promise<boolean>): void {
    allowed = false;
    claim = ready;
    void ready.then((ok) => {
      if (claim !== ready) return;
      allowed = ok;
      void runIfDue();
    });
  }
  allow(deps.ready);
  const stopLeader = leadership.subscribe((isLeader) => {
    if (isLeader)
      void runIfDue(); // taking over: resume what the last leader left, or refresh stale data
    else stopRetrying();
  });
  let wasOffline = connectivity.offline;
  const stopConnectivity = connectivity.subscribe((s) => {
    const offline = connectivity.offline;
    if (wasOffline && !offline && !disposed) {
      // (a sync that got the first answer is under way already: its outcome decides what follows)
      if (syncing === 0) void run();
      deps.onReconnect();
    }
    // a request outside a sync (a lookup's refresh) found the API gone: look again with the backoff
    if (!wasOffline && s.online && !s.reachable && syncing === 0 && retryTimer === undefined) retryLater();
    wasOffline = offline;
  });
  const timer = setInterval(() => void run(), deps.refreshIntervalMs);

  return {
    sync: syncNow,
    allow,
    dispose() {
      disposed = true;
      clearInterval(timer);
      clearTimeout(retryTimer);
      stopLeader();
      stopConnectivity();
    },
  };
}
