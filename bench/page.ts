// The bench page: window.bench, driven by bench/run.mjs over a DevTools pipe (cdpPage.mjs). Every timing is taken
// here, in the page, as a consumer of `createShopLookup` sees it (performance.now() is fine-grained: the page is
// cross-origin isolated). Each "session" is one worker running the engine plus its baseline probes.
import { wrap, type Remote } from 'comlink';
import { filter, firstValueFrom, tap } from 'rxjs';
import { mountDevtools } from '../packages/shop-lookup/src/devtools/index';
import { createShopLookup, type ShopLookup, type ShopLookupOptions } from '../packages/shop-lookup/src/index';
import { epochNow, type Probes } from './probes';

interface Session {
  worker: Worker;
  probes: Remote<Probes>;
  options: ShopLookupOptions;
  lookup: ShopLookup | null;
}

export type SessionOptions = Pick<
  ShopLookupOptions,
  'baseUrl' | 'auth' | 'dbName' | 'rateLimits' | 'refreshIntervalMs' | 'products'
>;

const sessions = new Map<string, Session>();
const watched = new Map<string, { at: Promise<number>; stop(): void }>();
/** The devtools mounted on a session: their unmount. */
const devtools = new Map<string, () => void>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function session(name: string): Session {
  const s = sessions.get(name);
  if (!s) throw new Error(`no bench session ${name}`);
  return s;
}

function lookupOf(name: string): ShopLookup {
  const l = session(name).lookup;
  if (!l) throw new Error(`bench session ${name} has no lookup yet`);
  return l;
}

/** A worker with its probes, no engine yet (the runner attaches to the worker before the engine starts). */
async function prepare(name: string, options: SessionOptions): Promise<void> {
  if (sessions.has(name)) throw new Error(`bench session ${name} is open`);
  const worker = new Worker(new URL('./benchWorker.ts', import.meta.url), { type: 'module', name: `bench-${name}` });
  const { port1, port2 } = new MessageChannel();
  worker.postMessage({ benchProbes: port2 }, [port2]);
  const probes = wrap<Probes>(port1);
  sessions.set(name, { worker, probes, options: { ...options, persist: false }, lookup: null });
  await probes.ping();
}

/** Starts the engine of a prepared session; it begins its first sync at once when it has no data. */
function start(name: string): ShopLookup {
  const s = session(name);
  s.lookup = createShopLookup({ ...s.options, worker: () => s.worker });
  return s.lookup;
}

async function close(name: string): Promise<void> {
  const s = sessions.get(name);
  if (!s) return;
  sessions.delete(name);
  await s.lookup?.close();
  await s.probes.close();
  s.worker.terminate();
}

/**
 * Deletes a database once every connection to it is closed. A terminated worker's connections close when the
 * browser gets to it (WebKit: a moment after terminate()), so "blocked" waits, up to 10 s, instead of failing.
 */
function deleteDatabase(dbName: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(dbName);
    let timer: ReturnType<typeof setTimeout> | undefined;
    req.onsuccess = () => (clearTimeout(timer), resolve());
    req.onerror = () => (clearTimeout(timer), reject(req.error));
    req.onblocked = () => {
      timer ??= setTimeout(
        () => reject(new Error(`deleting ${dbName} is blocked by an open connection for 10 s`)),
        10_000,
      );
    };
  });
}

const bench = {
  prepare,
  close,
  deleteDatabase,
  crossOriginIsolated: () => globalThis.crossOriginIsolated,

  /** createShopLookup → its first sync done: wall ms and the report. */
  async timedFirstSync(name: string) {
    const t0 = performance.now();
    const report = await start(name).sync();
    return { ms: performance.now() - t0, report };
  },

  /** Starts a prepared session's engine on the data its database holds, without a sync. */
  startOnly(name: string) {
    start(name);
  },

  /**
   * Mounts the devtools on a session (inline, so the panel is open, as a developer has it), the build being a
   * production one; resolves once the panel shows what inspect() answered (the coupon count).
   */
  async mountDevtools(name: string) {
    const box = document.body.appendChild(document.createElement('div'));
    const unmount = mountDevtools(lookupOf(name), box, { production: true });
    devtools.set(name, () => {
      unmount();
      box.remove();
    });
    const t0 = performance.now();
    const count = () =>
      box
        .querySelector('[data-shop-lookup-devtools]')
        ?.shadowRoot?.querySelector('[data-testid="devtools-coupons"]')
        ?.textContent?.trim() ?? '';
    while (!/^\d+$/.test(count())) await sleep(20);
    return { ms: performance.now() - t0, coupons: Number(count()) };
  },
  unmountDevtools(name: string) {
    devtools.get(name)?.();
    devtools.delete(name);
  },

  /** One more sync() of a running session. */
  async timedSync(name: string) {
    const t0 = performance.now();
    const report = await lookupOf(name).sync();
    return { ms: performance.now() - t0, report };
  },

  /**
   * Keyed lookups, each awaited before the next: `firstValueFrom(lookup.coupon(code))` (or productOptionByCode),
   * or, with `floor`, the floor: a bare Comlink call doing one Dexie read in the same worker.
   */
  async keyedLookups(name: string, kind: 'coupon' | 'option', keys: unknown[], floor: boolean) {
    const s = session(name);
    const lookup = lookupOf(name);
    const dbName = s.options.dbName!;
    const ms: number[] = [];
    let found = 0;
    for (const key of keys) {
      const option = key as [number, string];
      const t0 = performance.now();
      let data: unknown;
      if (floor) {
        data =
          kind === 'coupon'
            ? await s.probes.getCoupon(dbName, key as string)
            : await s.probes.getOptionByCode(dbName, ...option);
      } else {
        data =
          kind === 'coupon'
            ? (await firstValueFrom(lookup.coupon(key as string))).data
            : (await firstValueFrom(lookup.productOptionByCode(...option))).data;
      }
      ms.push(performance.now() - t0);
      if (data) found++;
    }
    return { ms, found };
  },

  /** coupons(): ms to its first emission, and how many coupons it held. */
  async couponsFirstEmission(name: string) {
    const t0 = performance.now();
    const first = await firstValueFrom(lookupOf(name).coupons());
    return { ms: performance.now() - t0, count: first.data.length };
  },

  /**
   * A live update: `coupon(code)` is subscribed; a sync (the runner changed the coupon upstream) commits the
   * change; ms from that commit (Dexie's storagemutated in the worker) to the emission here.
   */
  async liveUpdate(name: string, code: string, newName: string) {
    const s = session(name);
    const lookup = lookupOf(name);
    await s.probes.resetCommits();
    let emittedAt = 0;
    const first = deferred();
    const updated = deferred();
    const sub = lookup.coupon(code).subscribe((r) => {
      first.resolve();
      if (r.data?.name === newName && emittedAt === 0) {
        emittedAt = epochNow();
        updated.resolve();
      }
    });
    try {
      await first.promise;
      const report = await lookup.sync();
      await Promise.race([updated.promise, sleep(10_000)]);
      const commits = await s.probes.couponCommits(s.options.dbName!);
      const commit = Math.max(...commits.filter((t) => t <= emittedAt));
      return { ms: emittedAt === 0 ? null : emittedAt - commit, written: report.written, commits: commits.length };
    } finally {
      sub.unsubscribe();
    }
  },

  /** A reload with a warm database: createShopLookup (new worker) → first emission of coupon(code). */
  async reload(name: string, options: SessionOptions, code: string) {
    const t0 = performance.now();
    const worker = new Worker(new URL('./benchWorker.ts', import.meta.url), { type: 'module', name: `bench-${name}` });
    const lookup = createShopLookup({ ...options, persist: false, worker: () => worker });
    const first = await firstValueFrom(lookup.coupon(code));
    const ms = performance.now() - t0;
    await lookup.close();
    worker.terminate();
    return { ms, found: first.data !== null, syncedAt: first.syncedAt };
  },

  /**
   * The first sync with the API's real rate limits, and, `afterMs` into it, a read-through lookup of a coupon
   * the listing has not reached yet: ms until that lookup answers with the coupon.
   */
  async throttledSync(name: string, lateCode: string, afterMs: number) {
    const t0 = performance.now();
    const running = start(name).sync();
    await sleep(afterMs);
    const t1 = performance.now();
    let firstData: unknown;
    let emissions = 0;
    const answered = await firstValueFrom(
      lookupOf(name)
        .coupon(lateCode)
        .pipe(
          tap((r) => {
            if (emissions++ === 0) firstData = r.data;
          }),
          filter((r) => r.data !== null),
        ),
    );
    const readThroughMs = performance.now() - t1;
    const report = await running;
    return {
      ms: performance.now() - t0,
      report,
      readThroughMs,
      wasLocal: firstData !== null,
      found: answered.data !== null,
    };
  },

  /**
   * Subscribes `coupon(code)` and waits for its first emission; `watchedAt()` then resolves with the epoch ms at
   * which it emitted `newName` (a change made elsewhere: another till's relay feed).
   */
  async watchCoupon(name: string, code: string, newName: string) {
    const first = deferred();
    let sub: { unsubscribe(): void } | null = null;
    const at = new Promise<number>((resolve) => {
      sub = lookupOf(name)
        .coupon(code)
        .subscribe((r) => {
          first.resolve();
          if (r.data?.name === newName) resolve(epochNow());
        });
    });
    watched.set(name, { at, stop: () => sub?.unsubscribe() });
    await first.promise;
  },
  async watchedAt(name: string) {
    const w = watched.get(name);
    if (!w) throw new Error(`no watch on ${name}`);
    const at = await Promise.race([w.at, sleep(10_000).then(() => null)]);
    w.stop();
    watched.delete(name);
    return at;
  },

  /** Seeds `products` products × 3 options into a session's database; the codes to look up. */
  async seedOptions(name: string, products: number, firstProductNo: number) {
    const s = session(name);
    return s.probes.seedOptions(s.options.dbName!, products, firstProductNo);
  },

  listRequestTimings: (name: string) => session(name).probes.listRequestTimings(),
  fetchListing: (name: string, parallel: number) => {
    const s = session(name);
    return s.probes.fetchListing(s.options.baseUrl, s.options.auth as { key: string; secret: string }, parallel);
  },

  /** The bulkPut floor, in the session's worker: loads its stored coupons (untimed), then one timed bulkPut. */
  async bulkPutFloor(name: string) {
    await bench.loadFloor(name);
    return bench.putFloor(name);
  },
  /** The floor of a first sync (fetch, parse, bulkPut page by page; nothing else), after loadFloor. */
  fetchAndPutFloor: (name: string) => {
    const s = session(name);
    return s.probes.fetchAndPutFloor(
      `${s.options.dbName!}-fetch-put`,
      s.options.baseUrl,
      s.options.auth as { key: string; secret: string },
    );
  },
  /** The floor of a first sync from a relay (fetch, parse and bulkPut of its snapshot chunks alone), after loadFloor. */
  relayFeedFloor: (name: string) => {
    const s = session(name);
    return s.probes.relayFeedFloor(`${s.options.dbName!}-relay-floor`, s.options.baseUrl);
  },
  loadFloor: (name: string) => session(name).probes.loadFloorRecords(session(name).options.dbName!),
  putFloor: (name: string) => session(name).probes.bulkPutFloor(`${session(name).options.dbName!}-floor`),
};

declare global {
  interface Window {
    bench: typeof bench;
  }
}
window.bench = bench;
