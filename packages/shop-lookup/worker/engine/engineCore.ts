// What every part of the engine is given: the pieces made once at its start, passed in as one object.
import type { EngineOptions } from '../../src/protocol';
import type { ResourceState } from '../lookups/resourceState';
import type { ShopDatabase } from '../store/store';
import type { Connectivity } from '../tabs/connectivity';
import type { Leadership } from '../tabs/leadership';
import type { SyncStatusState } from '../tabs/syncStatus';

export interface EngineCore {
  options: EngineOptions;
  db: ShopDatabase;
  now: () => number;
  refreshIntervalMs: number;
  connectivity: Connectivity;
  /** Refresh state per resource (fetching, last failure), in memory. */
  resources: ResourceState;
  status: SyncStatusState;
  leadership: Leadership;
  /** Aborted by close(): every request, retry wait and lock wait ends. */
  signal: AbortSignal;
  isClosed(): boolean;
}
