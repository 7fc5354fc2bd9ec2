// The engine's status as one observable: raw facts in, the public `SyncStatus` (with its phase) out.
import type { LookupError, SyncStatus } from '../../src/protocol';
import type { Connectivity } from './connectivity';
import { observableState } from './observableState';

interface StatusFacts {
  syncing: boolean;
  /** A backoff or Retry-After pause is under way. */
  waiting: boolean;
  /** The last sync did not complete. */
  failed: boolean;
  progress: SyncStatus['progress'];
  lastSyncedAt: SyncStatus['lastSyncedAt'];
  lastError: LookupError | null;
  leader: boolean;
  persisted: boolean | undefined;
  /** Where the data comes from; null until the first sync found out. */
  source: SyncStatus['source'] | null;
  relayVersion: number | null;
  /** The relay's own state from its last answer; null until it answered. */
  relay: SyncStatus['relay'] | null;
}

export type SyncStatusState = ReturnType<typeof createSyncStatus>;

function phaseOf(f: StatusFacts, offline: boolean): SyncStatus['phase'] {
  if (offline) return 'offline';
  if (f.waiting) return 'waiting';
  if (f.syncing) return 'syncing';
  return f.failed ? 'error' : 'idle';
}

/** @example const status = createSyncStatus(connectivity); status.subscribe((s) => console.log(s.phase)); */
export function createSyncStatus(connectivity: Connectivity) {
  const facts = observableState<StatusFacts>({
    syncing: false,
    waiting: false,
    failed: false,
    progress: null,
    lastSyncedAt: { coupons: null, options: null },
    lastError: null,
    leader: true,
    persisted: undefined,
    source: null,
    relayVersion: null,
    relay: null,
  });
  const view = (): SyncStatus => {
    const f = facts.get();
    const status: SyncStatus = {
      online: !connectivity.offline,
      phase: phaseOf(f, connectivity.offline),
      progress: f.progress,
      lastSyncedAt: f.lastSyncedAt,
      lastError: f.lastError,
      leader: f.leader,
    };
    if (f.persisted !== undefined) status.persisted = f.persisted;
    if (f.source) status.source = f.source;
    if (f.source === 'relay') status.relayVersion = f.relayVersion ?? null;
    if (f.source === 'relay' && f.relay) status.relay = f.relay;
    return status;
  };
  return {
    facts,
    get: view,
    /** Told on every change of the facts or of connectivity. */
    subscribe(listener: (status: SyncStatus) => void): () => void {
      const a = facts.subscribe(() => listener(view()));
      const b = connectivity.subscribe(() => listener(view()));
      return () => {
        a();
        b();
      };
    },
  };
}
