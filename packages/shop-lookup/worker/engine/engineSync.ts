// The engine's syncs: sync() from the host, newly tracked products, prefetches, and the scheduler's lifetime.
// Every sync runs on the lazily loaded network side, which also holds the scheduler; a refusal, a closed engine or
// a chunk that failed to load is a report, never a rejection.
import { toLookupError } from '../../src/protocol';
import type { EngineApi, LookupError, SyncReport } from '../../src/protocol';
import { failedReport } from '../sync/syncReport';
import type { SyncOptions } from '../sync/syncRunner';
import type { DatabaseClaim } from './databaseClaim';
import type { EngineCore } from './engineCore';
import type { LoadedNetwork } from './loadNetwork';

export interface EngineSyncDeps extends EngineCore {
  network: Promise<LoadedNetwork>;
  claim: DatabaseClaim;
}

export interface EngineSync extends Pick<EngineApi, 'trackProducts' | 'prefetchIssuedCoupons'> {
  /** A sync: a running one is joined (with `freshAfter`, only one that began reading after the ask). */
  sync(options?: SyncOptions): Promise<SyncReport>;
  /**
   * The host's sync(): its data is the API's as of the call (a sync that was reading by then is waited for, then
   * one more runs); it also asks again what the shop's server refused since the start.
   */
  hostSync(): Promise<SyncReport>;
  /** The database was claimed again: background syncs resume once the claim holds. */
  allow(claimed: Promise<LookupError | null>): void;
  dispose(): void;
}

/** A report for work that could not even start (refused, or its code failed to load). */
const notStarted = (error: unknown): SyncReport => failedReport(toLookupError(error));

const ignore = () => undefined;

/** @example const engineSync = createEngineSync({ ...core, network, claim }); await engineSync.sync(); */
export function createEngineSync(deps: EngineSyncDeps): EngineSync {
  const { network, claim, connectivity } = deps;
  // a claim made again (after clear()) reaches the scheduler in order, also when it came before the chunk loaded
  const scheduler = network.then((n) => n.scheduler);
  // (read when the host asks, before any await: no sync can be reading before the network side has loaded)
  let loaded: LoadedNetwork | undefined;
  void network.then((n) => (loaded = n), ignore);
  return {
    async sync(options) {
      const blocked = await claim.ready;
      if (blocked || deps.isClosed())
        return failedReport(blocked ?? { code: 'closed', message: 'shop-lookup was closed.' });
      return scheduler.then((s) => s.sync(options), notStarted);
    },
    async hostSync() {
      const freshAfter = loaded?.runner.readsBegun ?? 0;
      await network.then((n) => n.runner.forgetRefusals(), ignore);
      return this.sync({ freshAfter });
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
    allow: (claimed) => void scheduler.then((s) => s.allow(claimed.then((blocked) => !blocked)), ignore),
    // (a close before the chunk loaded disposes the scheduler as soon as it exists, before it can start a sync)
    dispose: () => void scheduler.then((s) => s.dispose(), ignore),
  };
}
