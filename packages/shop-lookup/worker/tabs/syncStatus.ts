// The engine's status as one observable: raw facts in, the public `SyncStatus` (with its phase) out.
import type { LookupError, SyncStatus } from '../../src/protocol';
import type { Connectivity } from './connectivity';
import { observableState } from './observableState';

interface StatusFacts {
  syncing: boolean;
  /** A backoff or Retry-After pause is under way. */
  waiting: boolean;
  /** When that pause ends, epoch ms (null: none, or not known). */
  waitingUntil: number | null;
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
  /** How far this till's clock is off the API's, ms (positive: ahead); null until an answer told. */
  clockOffsetMs: number | null;
  /** Local storage cannot be used as it should (no IndexedDB, a newer schema), since the engine started. */
  storageError: LookupError | null;
  /** There is no usable IndexedDB: the data lives in memory. */
  memoryOnly: boolean;
  /** Offline-journal entries waiting in memory for storage, and why it refused the last one. */
  unsavedJournal: number;
  journalError: LookupError | null;
  /** The relay's own state from its last answer; null until it answered. */
  relay: SyncStatus['relay'] | null;
  /** What the shop's server refused this engine since it started (or since the host's last sync()). */
  refused: LookupError[];
  /** The journal's entries marked conflicting (useConflicts.ts); null: none. */
  useConflicts: SyncStatus['useConflicts'] | null;
}

/** A clock off by more than this is shown in status(). @example Math.abs(offset) > CLOCK_SHOWN_MS */
const CLOCK_SHOWN_MS = 60_000;

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
    waitingUntil: null,
    failed: false,
    progress: null,
    lastSyncedAt: { coupons: null, options: null },
    lastError: null,
    leader: true,
    persisted: undefined,
    source: null,
    relayVersion: null,
    clockOffsetMs: null,
    storageError: null,
    memoryOnly: false,
    unsavedJournal: 0,
    journalError: null,
    relay: null,
    refused: [],
    useConflicts: null,
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
    if (f.waiting && f.waitingUntil !== null) status.waitingUntil = f.waitingUntil;
    if (f.clockOffsetMs !== null && Math.abs(f.clockOffsetMs) > CLOCK_SHOWN_MS) status.clockOffsetMs = f.clockOffsetMs;
    const storageError = f.journalError ?? f.storageError;
    if (storageError)
      status.storage = { error: storageError, memoryOnly: f.memoryOnly, unsavedJournal: f.unsavedJournal };
    if (f.source === 'relay' && f.relay) status.relay = f.relay;
    if (f.refused.length > 0) status.refused = f.refused;
    if (f.useConflicts) status.useConflicts = f.useConflicts;
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
