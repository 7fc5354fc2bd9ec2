// The lookups useSuspenseLookup follows, shared by their deps: a component that suspends keeps no state of its own,
// so the subscription its first render starts must live outside it until it mounts (or is given up).
import type { Observable } from 'rxjs';
import type { LookupResult } from '../types';

/** One lookup followed for the components that read it. */
export interface SuspenseEntry {
  deps: readonly unknown[];
  /** The latest answer that may be shown, once there is one. */
  value?: LookupResult<unknown>;
  /** The error that ended the lookup before its first answer. */
  error?: unknown;
  /** Settles when there is a value or an error (what a suspended render waits for). */
  ready: Promise<void>;
  /** For useSyncExternalStore: mounted readers, told of each answer. */
  subscribe(onChange: () => void): () => void;
}

/** A lookup no mounted component reads is released after this long (a render suspended and then dropped). */
const RELEASE_MS = 5_000;
const entries: SuspenseEntry[] = [];

/**
 * The entry of these deps, started now if there is none: `source()` is subscribed at once and its first answer
 * that may be shown (not fetching, or confirmed data) makes it ready.
 * @example const entry = suspenseEntry(() => lookup.coupon(code), [lookup, code]);
 */
export function suspenseEntry(
  source: () => Observable<LookupResult<unknown>>,
  deps: readonly unknown[],
): SuspenseEntry {
  const known = entries.find((e) => e.deps.length === deps.length && e.deps.every((d, i) => Object.is(d, deps[i])));
  if (known) return known;
  const readers = new Set<() => void>();
  let settle!: () => void;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const entry: SuspenseEntry = {
    deps,
    ready: new Promise<void>((resolve) => (settle = resolve)),
    subscribe(onChange) {
      clearTimeout(timer);
      readers.add(onChange);
      return () => {
        readers.delete(onChange);
        if (readers.size === 0) release();
      };
    },
  };
  const release = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (readers.size > 0) return;
      subscription.unsubscribe();
      entries.splice(entries.indexOf(entry), 1);
    }, RELEASE_MS);
  };
  const tell = () => {
    settle();
    for (const r of [...readers]) r();
  };
  entries.push(entry);
  const subscription = source().subscribe({
    next(value) {
      if (entry.value === undefined && value.fetching && value.syncedAt === null) return;
      entry.value = value;
      tell();
    },
    error(error: unknown) {
      if (entry.value === undefined) entry.error = error;
      tell();
    },
  });
  release(); // dropped if no component mounts with it
  return entry;
}
