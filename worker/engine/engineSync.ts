// The engine's syncs: sync() from the host, the scheduler's own (isDue), newly tracked products, prefetches.
// Every sync runs on the lazily loaded network side; a refusal, a closed engine or a chunk that failed to load is
// a report, never a rejection.
import { toLookupError } from '../../src/protocol';
import type { EngineApi, LookupError, SyncReport } from '../../src/protocol';
import { metaKey, type Confirmation } from '../store/store';
import { FEED_STATE_KEY, type FeedState } from '../store/feedState';
import { createSyncScheduler } from '../sync/syncScheduler';
import { failedReport } from '../sync/syncReport';
import type { DatabaseClaim } from './databaseClaim';
import type { EngineCore } from './engineCore';
import type { LoadedNetwork } from './loadNetwork';

export interface EngineSyncDeps extends EngineCore {
  network: Promise<LoadedNetwork>;
  claim: DatabaseClaim;
  /** Back online (every engine, leader or not). */
  onReconnect(): void;
}

export interface EngineSync extends Pick<EngineApi, 'sync' | 'trackProducts' | 'prefetchIssuedCoupons'> {
  /** The database was claimed again: background syncs resume once the claim holds. */
  allow(claimed: Promise<LookupError | null>): void;
  dispose(): void;
}

/** A report for work that could not even start (refused, or its code failed to load). */
const notStarted = (error: unknown): SyncReport => failedReport(toLookupError(error));

/** @example const engineSync = createEngineSync({ ...core, network, claim, onReconnect }); await engineSync.sync(); */
export function createEngineSync(deps: EngineSyncDeps): EngineSync {
  const { db, network, claim, connectivity } = deps;
  const scheduler = createSyncScheduler({
    ...deps,
    sync: () => network.then((n) => n.runner.sync(), notStarted),
    async isDue() {
      const [coupons, checkpoint, feed] = await db.meta.bulkGet([metaKey.coupons, metaKey.couponSync, FEED_STATE_KEY]);
      const at = (coupons as Confirmation | undefined)?.confirmedAt;
      const snapshotUnderWay = (feed as FeedState | undefined)?.snapshot;
      return checkpoint !== undefined || !!snapshotUnderWay || at === undefined || deps.now() - at > deps.refreshIntervalMs;
    },
    ready: claim.ready.then((blocked) => !blocked),
  });
  return {
    async sync() {
      const blocked = await claim.ready;
      if (blocked || deps.isClosed()) return failedReport(blocked ?? { code: 'closed', message: 'shop-lookup was closed.' });
      return scheduler.sync();
    },
    async trackProducts(productNos) {
      const added = await claim.track(productNos);
      // new ones are fetched now
      if (added.length > 0 && !connectivity.offline) await (await network).runner.syncProducts(added);
    },
    async prefetchIssuedCoupons(codes) {
      const blocked = await claim.ready;
      if (blocked) return notStarted(blocked);
      return network.then((n) => n.prefetchIssuedCoupons(codes), notStarted);
    },
    allow: (claimed) => scheduler.allow(claimed.then((blocked) => !blocked)),
    dispose: () => scheduler.dispose(),
  };
}
