// A lookup for React Suspense: the first answer suspends the component, later answers update it.
import { useSyncExternalStore, type DependencyList } from 'react';
import type { Observable } from 'rxjs';
import type { LookupResult } from '../types';
import { suspenseEntry } from './suspenseEntries';

/**
 * The lookup `source()` returns, as `useLookup` names it (`deps` as for useMemo), for a component under
 * `<Suspense>`: it suspends until the lookup's first answer that may be shown (local data, even while it is being
 * refreshed, or any answer that is not waiting on the network: offline, not found), then returns that
 * `LookupResult` and re-renders with each later one. A lookup that fails before its first answer (closed, the
 * engine could not start) throws its error to the nearest error boundary. Components with the same deps share one
 * subscription, released once none is mounted.
 * @example const { data, offline } = useSuspenseLookup(() => lookup.coupon(code), [lookup, code]);
 */
export function useSuspenseLookup<T>(source: () => Observable<LookupResult<T>>, deps: DependencyList): LookupResult<T> {
  const entry = suspenseEntry(source as () => Observable<LookupResult<unknown>>, deps);
  const value = useSyncExternalStore(
    entry.subscribe,
    () => entry.value,
    () => entry.value,
  );
  if (value === undefined) {
    if (entry.error !== undefined) throw entry.error;
    throw entry.ready;
  }
  return value as LookupResult<T>;
}
