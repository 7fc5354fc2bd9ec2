// Per-resource refresh state in memory: is a refresh of `coupon:X` / `options:13805` / `coupons` running, and how
// did the last one fail. Lookups combine it with what IndexedDB holds.
import { toLookupError } from '../../src/protocol';
import type { LookupError } from '../../src/protocol';

export interface ResourceError {
  error: LookupError;
  at: number;
}

export interface ResourceState {
  isFetching(key: string): boolean;
  errorOf(key: string): ResourceError | undefined;
  /** Runs `work` as a refresh of `key`: fetching while it runs; on failure the error is kept until a success. */
  track<T>(key: string, work: () => Promise<T>): Promise<T>;
  clear(): void;
  /** Told the key whenever fetching or error of a key changes. */
  subscribe(listener: (key: string) => void): () => void;
}

/** @example const rs = createResourceState(Date.now, engineError); await rs.track('coupon:A', () => refresh('A')); */
export function createResourceState(
  now: () => number = Date.now,
  toError: (error: unknown) => LookupError = toLookupError,
): ResourceState {
  const fetching = new Map<string, number>();
  const errors = new Map<string, ResourceError>();
  const listeners = new Set<(key: string) => void>();
  const tell = (key: string) => {
    for (const l of [...listeners]) l(key);
  };
  return {
    isFetching: (key) => (fetching.get(key) ?? 0) > 0,
    errorOf: (key) => errors.get(key),
    async track(key, work) {
      fetching.set(key, (fetching.get(key) ?? 0) + 1);
      tell(key);
      try {
        const result = await work();
        errors.delete(key);
        return result;
      } catch (error) {
        errors.set(key, { error: toError(error), at: now() });
        throw error;
      } finally {
        const n = (fetching.get(key) ?? 1) - 1;
        if (n > 0) fetching.set(key, n);
        else fetching.delete(key);
        tell(key);
      }
    },
    clear() {
      errors.clear();
      for (const key of fetching.keys()) tell(key);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
