// Turns engine watches into RxJS Observables. One listener per connection carries every emission, tagged with
// its watch id; a subscription costs an id, not a MessageChannel, and unsubscribing leaves no proxy behind.
import { Observable, type Subscriber } from 'rxjs';
import type { WatchListener, WatchQuery } from './protocol';
import type { Connection } from './connectEngine';

export interface WatchHub {
  listener: WatchListener;
  observe<T>(connection: Promise<Connection>, query: WatchQuery): Observable<T>;
  /** Subscriptions currently open (for diagnostics and tests). */
  readonly size: number;
  completeAll(): void;
}

/** @example const hub = createWatchHub(); hub.observe(connection, { kind: 'coupons' }).subscribe(console.log); */
export function createWatchHub(): WatchHub {
  let nextId = 1;
  const subscribers = new Map<number, Subscriber<unknown>>();
  return {
    listener: (id, value) => subscribers.get(id)?.next(value),
    observe<T>(connection: Promise<Connection>, query: WatchQuery) {
      return new Observable<T>((subscriber) => {
        const id = nextId++;
        subscribers.set(id, subscriber as Subscriber<unknown>);
        connection
          .then((c) => (subscribers.has(id) ? c.api.watch(id, query) : undefined))
          .catch((error: unknown) => subscriber.error(error));
        return () => {
          if (!subscribers.delete(id)) return;
          void connection.then((c) => c.api.unwatch(id)).catch(() => undefined);
        };
      });
    },
    get size() {
      return subscribers.size;
    },
    completeAll() {
      const all = [...subscribers.values()];
      subscribers.clear();
      for (const s of all) s.complete();
    },
  };
}
