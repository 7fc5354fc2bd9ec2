// The sync status shared between the engines on one database (tabs, POS screens), over the tab channel. Only the
// engine running a sync speaks for it, until it has told its end; the others take that in (their lastSyncedAt
// only ever moves forward). Each tab's connectivity stays its own: another tab reaching the API says nothing about
// this one's network. A tab opened mid-sync asks, and the engine syncing answers.
import type { SyncStatusState } from './syncStatus';
import { createTabChannel, type SharedSyncFacts } from './tabChannel';

export interface SharedStatusDeps {
  /** The channel's name: one per database. */
  name: string;
  status: SyncStatusState;
  /** This engine runs a full sync right now (holds the sync lock). */
  ownSync(): boolean;
  /** Another engine cleared the database. */
  onCleared(): void;
}

const later = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/**
 * @example const shared = shareSyncStatus({ name: 'shop-lookup:my-shop', status, ownSync, onCleared });
 * shared.dispose();
 */
export function shareSyncStatus({ name, status, ownSync, onCleared }: SharedStatusDeps): {
  cleared(): void;
  dispose(): void;
} {
  let applyingRemote = false;
  let speaking = false;
  const facts = (): SharedSyncFacts => {
    const { syncing, waiting, waitingUntil, failed, progress, lastSyncedAt, lastError, source, relayVersion, relay } =
      status.facts.get();
    return { syncing, waiting, waitingUntil, failed, progress, lastSyncedAt, lastError, source, relayVersion, relay };
  };
  const channel = createTabChannel(name, {
    onFacts(theirs) {
      if (ownSync()) return; // (one sync at a time, by the lock: a message from before ours began)
      applyingRemote = true;
      const mine = status.facts.get().lastSyncedAt;
      status.facts.set({
        ...theirs,
        waitingUntil: theirs.waitingUntil ?? null,
        lastSyncedAt: {
          coupons: later(mine.coupons, theirs.lastSyncedAt.coupons),
          options: later(mine.options, theirs.lastSyncedAt.options),
        },
      });
      applyingRemote = false;
    },
    onAsk() {
      if (ownSync()) channel.post(facts());
    },
    onCleared,
  });
  const stop = status.facts.subscribe(() => {
    if (applyingRemote || (!ownSync() && !speaking)) return;
    speaking = ownSync();
    channel.post(facts());
  });
  channel.ask(); // opened mid-sync: the engine syncing tells where it stands
  return {
    cleared: () => channel.cleared(),
    dispose() {
      stop();
      channel.dispose();
    },
  };
}
