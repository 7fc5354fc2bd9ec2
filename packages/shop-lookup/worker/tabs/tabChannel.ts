// What one engine's sync does, told to the other engines on the same database (other tabs, other POS screens):
// they serve lookups from the shared IndexedDB, and with this their status() tells the truth about the sync too.
// Only the engine that runs a sync speaks for it; a tab's own connectivity stays its own. A tab opened mid-sync
// asks, and the engine syncing answers. A clear() is told too: the others check whose the database is again.
import type { SyncStatus } from '../../src/protocol';

/** The part of an engine's status that describes the shared sync, not the tab. */
export interface SharedSyncFacts {
  syncing: boolean;
  waiting: boolean;
  /** When the sync's pause ends (absent from older builds). */
  waitingUntil?: number | null;
  failed: boolean;
  progress: SyncStatus['progress'];
  lastSyncedAt: SyncStatus['lastSyncedAt'];
  lastError: SyncStatus['lastError'];
  /** Where the syncing engine's data comes from, and the relay version it reached (absent from older builds). */
  source?: 'relay' | 'direct' | null;
  relayVersion?: number | null;
  /** The relay's own state as the syncing engine last heard it. */
  relay?: SyncStatus['relay'] | null;
}

export interface TabHandlers {
  /** Another engine's sync moved on (or ended). */
  onFacts(facts: SharedSyncFacts): void;
  /** An engine opened and asks what the running sync does. */
  onAsk(): void;
  /** Another engine cleared the database. */
  onCleared(): void;
}

export interface TabChannel {
  /** Tells the others what this engine's own sync does. */
  post(facts: SharedSyncFacts): void;
  /** Asks the engine that syncs, if any, to tell its facts. */
  ask(): void;
  /** Tells the others that this engine cleared the database. */
  cleared(): void;
  dispose(): void;
}

type Message = { type: 'sync-facts'; facts: SharedSyncFacts } | { type: 'ask' } | { type: 'cleared' };

/** @example const channel = createTabChannel('shop-lookup:my-shop', { onFacts, onAsk, onCleared }); */
export function createTabChannel(name: string, handlers: TabHandlers): TabChannel {
  if (typeof BroadcastChannel === 'undefined') {
    return { post: () => undefined, ask: () => undefined, cleared: () => undefined, dispose: () => undefined };
  }
  const channel = new BroadcastChannel(name);
  channel.onmessage = (event: MessageEvent<Partial<Message> | null>) => {
    const m = event.data;
    if (m?.type === 'sync-facts' && m.facts) handlers.onFacts(m.facts);
    else if (m?.type === 'ask') handlers.onAsk();
    else if (m?.type === 'cleared') handlers.onCleared();
  };
  const send = (m: Message) => channel.postMessage(m);
  return {
    post: (facts) => send({ type: 'sync-facts', facts }),
    ask: () => send({ type: 'ask' }),
    cleared: () => send({ type: 'cleared' }),
    dispose: () => channel.close(),
  };
}
