// Turns engine watches into RxJS Observables. One listener per connection carries every emission, tagged with
// its watch id; a subscription costs an id, not a MessageChannel, and unsubscribing leaves no proxy behind.
// The first emission of each watch is the answer of its `watchFirst` call (one message less per lookup).
import { Observable, type Subscriber } from 'rxjs';
import type { WatchListener, WatchQuery } from './protocol';
import type { Connection } from './connectEngine';

export interface WatchHub {
  listener: WatchListener;
  observe<T>(connection: Promise<Connection>, query: WatchQuery): Observable<T>;
  /** Completes every subscription, and every later one at once (the lookup is closed). */
  completeAll(): void;
}

/** @example const hub = createWatchHub(); hub.observe(connection, { kind: 'coupons' }).subscribe(console.log); */
export function createWatchHub(): WatchHub {
  let nextId = 1;
  // id → its subscriber, and the listener emissions that arrived before the first (the answer and the listener
  // travel on different message channels, which keep no order between them); null once the first is delivered
  const entries = new Map<number, [Subscriber<unknown>, unknown[] | null]>();
  let closed = false;
  return {
    listener(id, value) {
      const e = entries.get(id);
      if (e?.[1]) e[1].push(value);
      else e?.[0].next(value);
    },
    observe<T>(connection: Promise<Connection>, query: WatchQuery) {
      return new Observable<T>((subscriber) => {
        // after close() nothing will ever answer: complete, as the lookups open at close() did
        if (closed) return subscriber.complete();
        const id = nextId++;
        const e: [Subscriber<unknown>, unknown[] | null] = [subscriber as Subscriber<unknown>, []];
        entries.set(id, e);
        connection
          .then((c) => (entries.has(id) ? c.api.watchFirst(id, query) : null))
          .then((first) => {
            const early = e[1]!;
            e[1] = null;
            for (const value of first === null ? early : [first, ...early]) subscriber.next(value as T);
          })
          .catch((error: unknown) => subscriber.error(error));
        return () => {
          if (!entries.delete(id)) return;
          void connection.then((c) => c.api.unwatch(id)).catch(() => undefined);
        };
      });
    },
    completeAll() {
      closed = true;
      const all = [...entries.values()];
      entries.clear();
      for (const [s] of all) s.complete();
    },
  };
}
