// Shared fixtures: a mock shop API on 127.0.0.1 port 0 (@shop-lookup/test-kit's), a lookup in this thread over a
// fresh fake IndexedDB, and helpers to wait for the emission a test is about.
import { expose } from 'comlink';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { filter, firstValueFrom, timeout, type Observable } from 'rxjs';
import { vi } from 'vitest';
import { KEY, SECRET } from '@shop-lookup/test-kit/startMock';
import { createShopLookup, type ShopLookup, type ShopLookupOptions } from '../src';
import type { WorkerApi } from '../src/protocol';
import type { LookupResult } from '../src/types';
import type { EngineDeps } from '../worker/engine/createEngine';
import type { CouponCheckpoint } from '../worker/sync/direct/listingCheckpoint';
import { metaKey, openStore, type ShopDatabase } from '../worker/store/store';
import type { Leadership } from '../worker/tabs/leadership';
import { observableState } from '../worker/tabs/observableState';
import { createWorkerApi } from '../worker/workerApi';

export { KEY, SECRET, startMock } from '@shop-lookup/test-kit/startMock';
export { waitFor } from '@shop-lookup/test-kit/waitFor';

let dbCounter = 0;

/** A lookup in this thread, on its own fresh IndexedDB, against `mock`. */
export function lookupFor(
  mock: { url: string },
  options: Partial<ShopLookupOptions> = {},
): ShopLookup & { idb: IDBFactory } {
  const idb = (options.indexedDB as IDBFactory | undefined) ?? new IDBFactory();
  const lookup = createShopLookup({
    baseUrl: mock.url,
    auth: { key: KEY, secret: SECRET },
    worker: false,
    indexedDB: idb,
    IDBKeyRange,
    rateLimits: false,
    retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
    dbName: `shop-${++dbCounter}`,
    ...options,
  });
  return Object.assign(lookup, { idb });
}

/**
 * The first emission that satisfies `predicate` (fails the test after `ms`: long, since the test command shares 2
 * cores between two lanes; how fast an answer comes is the bench's to say).
 */
export function next<T>(source: Observable<T>, predicate: (value: T) => boolean = () => true, ms = 15_000): Promise<T> {
  return firstValueFrom(source.pipe(filter(predicate), timeout({ first: ms })));
}

/** The first emission confirmed by the API and not fetching any more. */
export function confirmed<T>(source: Observable<LookupResult<T>>, ms = 15_000): Promise<LookupResult<T>> {
  return next(source, (r) => r.syncedAt !== null && !r.fetching, ms);
}

/** Records every emission of `source` until `stop()`. */
export function record<T>(source: Observable<T>): { values: T[]; stop(): void } {
  const values: T[] = [];
  const sub = source.subscribe((v) => values.push(v));
  return { values, stop: () => sub.unsubscribe() };
}

/** Leadership the test hands out and takes back by hand (`set`). */
export function fakeLeadership(isLeader: boolean): Leadership & { set(v: boolean): void } {
  const s = observableState({ isLeader });
  return {
    get isLeader() {
      return s.get().isLeader;
    },
    subscribe: (l) => s.subscribe((x) => l(x.isLeader)),
    dispose: () => undefined,
    set: (v) => s.set({ isLeader: v }),
  };
}

/**
 * Fake timers for an engine that also does real I/O (requests, IndexedDB): only the timers are fake, and the clock
 * moves on 10 ms at a time with a short real pause between steps, so the I/O a timer starts runs before the next
 * step. `ms` is how far the fake clock has moved: what a backoff is measured in. Call `restore()` when done.
 * @example const clock = steppedClock(); await clock.until(() => done); expect(clock.ms).toBeLessThan(2_100);
 */
export function steppedClock() {
  const realTimeout = globalThis.setTimeout;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  const clock = {
    ms: 0,
    /** Steps until `done()` or `realLimitMs` of real time. */
    async until(done: () => boolean, realLimitMs = 30_000, stepMs = 10): Promise<void> {
      for (const end = Date.now() + realLimitMs; !done() && Date.now() < end; ) {
        await new Promise((r) => realTimeout(r, 2));
        await vi.advanceTimersByTimeAsync(stepMs);
        clock.ms += stepMs;
      }
    },
    /** Lets `ms` of fake time pass, in steps of 250 ms. */
    pass(ms: number): Promise<void> {
      const target = clock.ms + ms;
      return clock.until(() => clock.ms >= target, 60_000, 250);
    },
    restore: () => vi.useRealTimers(),
  };
  return clock;
}

/**
 * Reads a database beside the engine that uses it (a second connection): how far a running sync got, say.
 * @example await vi.waitFor(async () => expect(await peek(idb, dbName, (db) => db.couponStage.count())).toBe(1));
 */
export async function peek<T>(idb: IDBFactory, dbName: string, read: (db: ShopDatabase) => Promise<T>): Promise<T> {
  const db = openStore(dbName, { indexedDB: idb, IDBKeyRange });
  try {
    return await read(db);
  } finally {
    db.close();
  }
}

/** The page a running coupon listing has stored last (0 when none is under way). */
export const listedPage = (idb: IDBFactory, dbName: string) =>
  peek(idb, dbName, async (db) => ((await db.meta.get(metaKey.couponSync)) as CouponCheckpoint | undefined)?.page ?? 0);

/** Every row of every object store of a (fake) IndexedDB database, as JSON text. */
export async function dumpDatabase(idb: IDBFactory, name: string): Promise<string> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const req = idb.open(name);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const out: Record<string, unknown[]> = {};
  for (const store of Array.from(db.objectStoreNames)) {
    out[store] = await new Promise((resolve, reject) => {
      const req = db.transaction(store).objectStore(store).getAll();
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }
  db.close();
  return JSON.stringify(out);
}

/**
 * A lookup whose engine gets extra dependencies (a faulty store, fake locks), reached over a MessageChannel as a
 * worker would be. Close the lookup, then `dispose()`.
 */
export function lookupWithEngine(
  mock: { url: string },
  deps: EngineDeps,
  options: Partial<ShopLookupOptions> = {},
): ShopLookup & { engine: WorkerApi; dispose(): void } {
  const channel = new MessageChannel();
  const engine = createWorkerApi({ indexedDB: new IDBFactory(), IDBKeyRange, fetch, ...deps });
  expose(engine, channel.port1);
  const lookup = createShopLookup({
    baseUrl: mock.url,
    auth: { key: KEY, secret: SECRET },
    worker: () => channel.port2,
    rateLimits: false,
    retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
    dbName: `engine-${++dbCounter}`,
    ...options,
  });
  return Object.assign(lookup, {
    engine,
    dispose() {
      channel.port1.close();
      channel.port2.close();
    },
  });
}

/**
 * A store whose writes can be made to fail like a full disk or a closed connection (a Dexie middleware).
 * @example const faulty = faultyStore(); lookupWithEngine(mock, { openStore: faulty.openStore });
 * faulty.failWrites('QuotaExceededError');
 */
export function faultyStore() {
  let failing: { name: string; tables: string[] | null; perRequest: boolean; accept: number } | null = null;
  let db: ShopDatabase | null = null;
  const open: typeof openStore = (name, deps) => {
    db = openStore(name, deps);
    db.use({
      stack: 'dbcore',
      name: 'injected-faults',
      create: (down) => ({
        ...down,
        table: (tableName) => {
          const table = down.table(tableName);
          return {
            ...table,
            mutate: (req) => {
              if (!failing || (failing.tables !== null && !failing.tables.includes(tableName)))
                return table.mutate(req);
              const error = new DOMException(`injected ${failing.name}`, failing.name);
              if (!failing.perRequest) return Promise.reject(error);
              // as WebKit does: each write refused on its own request (Dexie then throws a BulkError); the first
              // `accept` writes of a request are taken (a nearly full disk), the rest refused
              const count = 'values' in req ? req.values.length : 'keys' in req ? (req.keys?.length ?? 1) : 1;
              const taken = 'values' in req ? Math.min(failing.accept, count) : 0;
              const failures = Object.fromEntries(Array.from({ length: count - taken }, (_, i) => [taken + i, error]));
              if (taken === 0 || !('values' in req))
                return Promise.resolve({ numFailures: count, failures, lastResult: undefined, results: [] });
              const part = {
                ...req,
                values: req.values.slice(0, taken),
                ...(req.keys ? { keys: req.keys.slice(0, taken) } : {}),
              } as typeof req;
              return table.mutate(part).then((done) => ({ ...done, numFailures: count - taken, failures }));
            },
          };
        },
      }),
    });
    return db;
  };
  return {
    openStore: open,
    /**
     * Writes (to these tables) fail with a DOMException `name` until `heal()`: the transaction's, or (`perRequest`)
     * each write's own request, the first `accept` writes of each request taken.
     */
    failWrites(name: string, tables: string[] | null = null, { perRequest = false, accept = 0 } = {}) {
      failing = { name, tables, perRequest, accept };
    },
    heal() {
      failing = null;
    },
    get db() {
      return db!;
    },
  };
}
