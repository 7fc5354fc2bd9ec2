// When the engine syncs by itself: at start, every refreshIntervalMs, once on reconnect, on taking over from a
// closed leader, and with growing pauses while the API cannot be reached. Only the leader (one engine per
// database across tabs) schedules syncs; every engine refreshes its own on-screen lookups on reconnect.
import type { SyncReport } from '../../src/protocol';
import { olderThan } from '../store/dataAge';
import { FEED_STATE_KEY, type FeedState } from '../store/feedState';
import { metaKey, type Confirmation, type ShopDatabase } from '../store/store';
import type { Connectivity } from '../tabs/connectivity';
import type { Leadership } from '../tabs/leadership';

export interface SyncSchedulerDeps {
  sync(): Promise<SyncReport>;
  /** Whether the data is old enough (or a listing was left unfinished) to sync now. */
  isDue(): Promise<boolean>;
  /** Resolves when syncing may start at all (false: never, e.g. another shop's database). */
  ready: Promise<boolean>;
  connectivity: Connectivity;
  leadership: Leadership;
  refreshIntervalMs: number;
  /** Called on every return from offline (all engines, leader or not). */
  onReconnect(): void;
  probeMinMs?: number;
  probeMaxMs?: number;
}

export interface SyncScheduler {
  /** A sync asked for by the host (any engine may run one; the sync lock keeps them apart). */
  sync(): Promise<SyncReport>;
  /** The database was claimed again (after clear()): syncing may start once `ready` says so, as at start. */
  allow(ready: Promise<boolean>): void;
  dispose(): void;
}

/**
 * Whether a sync is due: the coupons were never confirmed or not for `refreshIntervalMs`, or a listing or a relay
 * snapshot was left unfinished (resuming it is due at once).
 * @example await isSyncDue(db, Date.now(), 300_000)
 */
export async function isSyncDue(db: ShopDatabase, now: number, refreshIntervalMs: number): Promise<boolean> {
  const [coupons, checkpoint, feed] = await db.meta.bulkGet([metaKey.coupons, metaKey.couponSync, FEED_STATE_KEY]);
  const at = (coupons as Confirmation | undefined)?.confirmedAt;
  const snapshotUnderWay = (feed as FeedState | undefined)?.snapshot;
  return checkpoint !== undefined || !!snapshotUnderWay || olderThan(at, now, refreshIntervalMs);
}

/** @example const scheduler = createSyncScheduler({ sync, isDue, ready, connectivity, leadership, refreshIntervalMs, onReconnect }); */
export function createSyncScheduler(deps: SyncSchedulerDeps): SyncScheduler {
  const { connectivity, leadership } = deps;
  const probeMin = deps.probeMinMs ?? 2_000;
  const probeMax = deps.probeMaxMs ?? 60_000;
  let disposed = false;
  let allowed = false;
  let probeDelay = probeMin;
  let probeTimer: ReturnType<typeof setTimeout> | undefined;

  const canSync = () => !disposed && allowed && leadership.isLeader && !connectivity.offline;

  // After a failure while the API cannot be reached, try again later, each time waiting longer; an answer ends it.
  function afterSync(report: SyncReport): void {
    clearTimeout(probeTimer);
    const s = connectivity.get();
    if (disposed || report.ok || !s.online || s.reachable || !leadership.isLeader) {
      probeDelay = probeMin;
      return;
    }
    probeTimer = setTimeout(() => void run(true), probeDelay);
    probeDelay = Math.min(probeMax, probeDelay * 2);
  }

  async function syncNow(): Promise<SyncReport> {
    const report = await deps.sync();
    afterSync(report);
    return report;
  }

  async function run(probe = false): Promise<void> {
    // a probe runs while "offline" by our own reckoning (unreachable): that is its point
    if (disposed || !allowed || !leadership.isLeader || (!probe && connectivity.offline)) return;
    await syncNow();
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
    if (isLeader) void runIfDue(); // taking over: resume what the last leader left, or refresh stale data
  });
  let wasOffline = connectivity.offline;
  const stopConnectivity = connectivity.subscribe(() => {
    const offline = connectivity.offline;
    if (wasOffline && !offline && !disposed) {
      void run();
      deps.onReconnect();
    }
    wasOffline = offline;
  });
  const timer = setInterval(() => void run(), deps.refreshIntervalMs);

  return {
    sync: syncNow,
    allow,
    dispose() {
      disposed = true;
      clearInterval(timer);
      clearTimeout(probeTimer);
      stopLeader();
      stopConnectivity();
    },
  };
}
