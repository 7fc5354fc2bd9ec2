// The engine's sync state as React state, through useSyncExternalStore.
import { useMemo, useSyncExternalStore } from 'react';
import type { ShopLookup } from '../shopLookup';
import type { SyncStatus } from '../types';
import { createObservableStore } from './observableStore';

function serverSnapshot(): null {
  return null;
}

/**
 * `lookup.status()` while the component is mounted: null until the first status arrives, on the server, and for a
 * null `lookup`; after that the latest `SyncStatus` (the last one stays if the lookup is closed).
 * @example const status = useSyncStatus(lookup); return <Badge>{status?.online ? status.phase : 'offline'}</Badge>;
 */
export function useSyncStatus(lookup: Pick<ShopLookup, 'status'> | null | undefined): SyncStatus | null {
  const store = useMemo(
    () =>
      createObservableStore<SyncStatus, SyncStatus | null>(
        () => lookup?.status(),
        null,
        (e, previous) => ('value' in e ? e.value : previous),
      ),
    [lookup],
  );
  return useSyncExternalStore(store.subscribe, store.getSnapshot, serverSnapshot);
}
