// This engine's place among the others on one database (tabs, POS screens): leader election and shared status.
// The leader shows in status(); the sync status travels over the tab channel (shareSyncStatus.ts).
import { electLeader, type Leadership } from './leadership';
import type { LockManagerLike } from './locks';
import { shareSyncStatus, type SharedStatusDeps } from './shareSyncStatus';

export interface TabsDeps extends Omit<SharedStatusDeps, 'name'> {
  locks: LockManagerLike;
  dbName: string;
}

export interface Tabs {
  leadership: Leadership;
  /** Tells the other engines this one cleared the database. */
  cleared(): void;
  /** Leaves: gives up the leader lock (or the wait for it) and the channel. */
  dispose(): void;
}

/**
 * @example const tabs = joinTabs({ locks, dbName: 'shop-lookup:my-shop', status, ownSync, onCleared });
 * tabs.leadership.isLeader;
 */
export function joinTabs({ locks, dbName, status, ...shared }: TabsDeps): Tabs {
  const leadership = electLeader(locks, `shop-lookup:${dbName}:leader`);
  const stopLeaderFact = leadership.subscribe((leader) => status.facts.set({ leader }));
  status.facts.set({ leader: leadership.isLeader });
  // What the syncs do, told between the engines on this database; clear() too.
  const channel = shareSyncStatus({ name: `shop-lookup:${dbName}`, status, ...shared });
  return {
    leadership,
    cleared: channel.cleared,
    dispose() {
      leadership.dispose();
      stopLeaderFact();
      channel.dispose();
    },
  };
}
