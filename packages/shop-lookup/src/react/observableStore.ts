// A store for useSyncExternalStore over one Observable: subscribes lazily (never during render, never on the
// server), keeps one snapshot object per emission so getSnapshot is stable between emissions (no tearing).
import type { Observable } from 'rxjs';

/** What useSyncExternalStore needs. Internal to shop-lookup/react. */
export interface ObservableStore<S> {
  subscribe(onChange: () => void): () => void;
  getSnapshot(): S;
}

/**
 * `source` is called on each subscribe (so one subscription per mounted hook, a new one after an unmount);
 * `toSnapshot` turns an emission, or the error that ended the Observable, into the next snapshot.
 * @example const store = createObservableStore(() => lookup.status(), null, (e) => e.value ?? null);
 */
export function createObservableStore<T, S>(
  source: () => Observable<T> | null | undefined,
  initial: S,
  toSnapshot: (event: { value: T } | { error: unknown }, previous: S) => S,
): ObservableStore<S> {
  let snapshot = initial;
  return {
    subscribe(onChange) {
      const observable = source();
      if (!observable) return () => {};
      const subscription = observable.subscribe({
        next(value) {
          snapshot = toSnapshot({ value }, snapshot);
          onChange();
        },
        error(error: unknown) {
          snapshot = toSnapshot({ error }, snapshot);
          onChange();
        },
      });
      return () => subscription.unsubscribe();
    },
    getSnapshot: () => snapshot,
  };
}
