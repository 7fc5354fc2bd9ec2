// The engine's sync state as a Vue ref.
import { shallowReadonly, shallowRef, toValue, type MaybeRefOrGetter, type ShallowRef } from 'vue';
import type { ShopLookup } from '../shopLookup';
import type { SyncStatus } from '../types';
import { followObservable } from './followObservable';

/**
 * A ref of `lookup.status()` while the calling component (or effect scope) lives: null until the first status
 * arrives (again after `lookup` changed), during server rendering, and for a null `lookup`; then the latest `SyncStatus` (the last one stays if the
 * lookup is closed). `lookup` may be a ref or a getter.
 * @example const status = useSyncStatus(lookup); // status.value?.phase
 */
export function useSyncStatus(
  lookup: MaybeRefOrGetter<Pick<ShopLookup, 'status'> | null | undefined>,
): Readonly<ShallowRef<SyncStatus | null>> {
  const state = shallowRef<SyncStatus | null>(null);
  followObservable(
    () => toValue(lookup)?.status(),
    () => {
      state.value = null;
    },
    (e) => {
      if ('value' in e) state.value = e.value;
    },
  );
  return shallowReadonly(state);
}
