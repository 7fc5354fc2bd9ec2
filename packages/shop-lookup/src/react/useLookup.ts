// The lookups as React state: one subscription per mounted hook, through useSyncExternalStore.
import { useMemo, useSyncExternalStore, type DependencyList } from 'react';
import type { Observable } from 'rxjs';
import { toLookupError } from '../errors';
import type { LookupError, LookupResult } from '../types';
import { createObservableStore } from './observableStore';

/**
 * What `useLookup` returns: the lookup's `LookupResult` once it answered (`pending: false`), before that (and
 * during server rendering) a placeholder with `data: undefined` and `pending: true` (with `error` set if the
 * lookup failed before its first answer).
 * @example const { data, pending, offline } = useLookup(() => lookup.coupon(code), [code]);
 */
export type LookupState<T> =
  | (LookupResult<T> & { pending: false })
  | { data: undefined; syncedAt: null; fetching: false; offline: false; error: LookupError | null; pending: true };

const PENDING: LookupState<never> = Object.freeze({
  data: undefined,
  syncedAt: null,
  fetching: false,
  offline: false,
  error: null,
  pending: true,
});

/**
 * Subscribes to the lookup `source()` returns while the component is mounted, and again (after unsubscribing)
 * whenever a value in `deps` changes, like `useMemo`. `source` is not called while rendering, so nothing is looked
 * up during server rendering: the server renders the placeholder. Return null or undefined to look nothing up
 * (no lookup yet, or no code typed). If the lookup fails for good (the lookup was closed, the engine could not
 * start), the last data stays and `error` says what happened.
 * @example const coupon = useLookup(() => lookup.coupon(code), [code]); if (!coupon.pending) show(coupon.data);
 */
export function useLookup<T>(
  source: () => Observable<LookupResult<T>> | null | undefined,
  deps: DependencyList,
): LookupState<T> {
  // deps are the caller's, as with useMemo: a new store (and subscription) when one of them changes
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names the dependencies of its source
  const store = useMemo(() => createObservableStore<LookupResult<T>, LookupState<T>>(source, PENDING, nextState), deps);
  return useSyncExternalStore(store.subscribe, store.getSnapshot, serverSnapshot);
}

function serverSnapshot(): LookupState<never> {
  return PENDING;
}

function nextState<T>(
  event: { value: LookupResult<T> } | { error: unknown },
  previous: LookupState<T>,
): LookupState<T> {
  if ('value' in event) return { ...event.value, pending: false };
  const error = toLookupError(event.error);
  return { ...previous, fetching: false, error };
}
