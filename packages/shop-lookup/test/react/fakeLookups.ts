// Hand-driven lookups for the hook tests: every subscription is visible, every emission is explicit.
import { Observable, type Subscriber } from 'rxjs';
import type { LookupResult, SyncStatus } from '../../src/types';

export interface FakeLookups {
  /** lookup.coupon(code) stand-in. */
  coupon(code: string): Observable<LookupResult<{ coupon_code: string; name: string } | null>>;
  status(): Observable<SyncStatus>;
  /** How often `coupon`/`status` was called (a lookup created). */
  created: string[];
  /** Open subscriptions, by key ('coupon:A', 'status'). */
  open(): string[];
  emit(key: string, value: unknown): void;
  fail(key: string, error: unknown): void;
}

export function found<T>(data: T, syncedAt = 1_700_000_000_000): LookupResult<T> {
  return { data, syncedAt, fetching: false, offline: false, error: null };
}

export function fakeLookups(): FakeLookups {
  const subscribers = new Map<string, Set<Subscriber<unknown>>>();
  const created: string[] = [];
  const observe = <T>(key: string): Observable<T> => {
    created.push(key);
    return new Observable<T>((subscriber) => {
      const set = subscribers.get(key) ?? new Set();
      subscribers.set(key, set);
      set.add(subscriber as Subscriber<unknown>);
      return () => set.delete(subscriber as Subscriber<unknown>);
    });
  };
  const each = (key: string, f: (s: Subscriber<unknown>) => void) => [...(subscribers.get(key) ?? [])].forEach(f);
  return {
    coupon: (code) => observe(`coupon:${code}`),
    status: () => observe('status'),
    created,
    open: () => [...subscribers].flatMap(([key, set]) => [...set].map(() => key)),
    emit: (key, value) => each(key, (s) => s.next(value)),
    fail: (key, error) => each(key, (s) => s.error(error)),
  };
}
