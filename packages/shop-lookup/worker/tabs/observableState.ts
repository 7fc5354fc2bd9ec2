// A tiny subscribable state cell: the engine's state lives in a few of these instead of flags across modules.

export interface ObservableState<T> {
  get(): T;
  /** Replaces the state (or merges a partial object) and tells subscribers if anything changed. */
  set(next: Partial<T> | ((current: T) => T)): void;
  subscribe(listener: (state: T) => void): () => void;
}

/** @example const s = observableState({ n: 0 }); s.subscribe(console.log); s.set({ n: 1 }); */
export function observableState<T extends object>(initial: T): ObservableState<T> {
  let state = initial;
  const listeners = new Set<(state: T) => void>();
  return {
    get: () => state,
    set(next) {
      const value = typeof next === 'function' ? next(state) : { ...state, ...next };
      const changed = (Object.keys(value) as (keyof T)[]).some((k) => value[k] !== state[k]);
      if (!changed) return;
      state = value;
      for (const l of [...listeners]) l(state);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
