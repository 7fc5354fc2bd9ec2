// What one engine's sync does, told to the other engines on the same database (other tabs, other POS screens):
// they serve lookups from the shared IndexedDB, and with this their status() tells the truth about the sync too.
import type { SyncStatus } from '../src/types';

/** The part of an engine's status that describes the shared sync, not the tab. */
export interface SharedSyncFacts {
  syncing: boolean;
  waiting: boolean;
  failed: boolean;
  progress: SyncStatus['progress'];
  lastSyncedAt: SyncStatus['lastSyncedAt'];
  lastError: SyncStatus['lastError'];
  /** The syncing engine could reach the API at its last try. */
  reachable: boolean;
  /** Where the syncing engine's data comes from, and the relay version it reached (absent from older builds). */
  source?: 'relay' | 'direct' | null;
  relayVersion?: number | null;
}

export interface TabChannel {
  post(facts: SharedSyncFacts): void;
  dispose(): void;
}

/** @example const channel = createTabChannel('shop-lookup:my-shop', (facts) => apply(facts)); */
export function createTabChannel(name: string, onFacts: (facts: SharedSyncFacts) => void): TabChannel {
  if (typeof BroadcastChannel === 'undefined') return { post: () => undefined, dispose: () => undefined };
  const channel = new BroadcastChannel(name);
  channel.onmessage = (event: MessageEvent<{ type?: string; facts?: SharedSyncFacts }>) => {
    if (event.data?.type === 'sync-facts' && event.data.facts) onFacts(event.data.facts);
  };
  return {
    post: (facts) => channel.postMessage({ type: 'sync-facts', facts }),
    dispose: () => channel.close(),
  };
}
