// A storefront's engine while its database opens. A shopper's product page is most often a first visit: nothing is
// stored yet, and opening IndexedDB takes longer than reading the product. So the engine is usable at once, and a
// productOptions lookup of a tracked product shows the opening read's answer (sync/openingReads.ts) as soon as it
// arrives; every other call waits for the engine assembled on the open database. The assembled engine's watch then
// takes over, but what it shows older than that answer (the empty database, before the answer is stored) is held
// back: a lookup never goes back to older data. A failure it reports is shown at once.
import type { EngineApi, LookupResult, SyncStatus, WatchListener, WatchQuery } from '../../src/protocol';
import type { Connectivity } from '../tabs/connectivity';
import type { NetworkStart } from './loadNetwork';

type Emission = LookupResult<unknown> | SyncStatus;

export interface WhileOpeningDeps {
  listener: WatchListener;
  /** Products whose options the opening reads cover. */
  productNos: readonly number[];
  /** The network side's early start, with the opening reads. */
  start: Promise<NetworkStart>;
  connectivity: Connectivity;
  /** The engine on the open database, given the listener to tell (its emissions pass the hold described above). */
  assemble(listener: WatchListener): Promise<EngineApi>;
}

/** One lookup answered from an opening read: the `syncedAt` of that answer until the engine's watch reaches it. */
interface Hold {
  /** What the lookup last showed: its syncedAt, and whether it was a failure. */
  shown: { syncedAt: number | null; failed: boolean } | null;
  /** While set, the engine's emissions older than this are not shown. */
  until: number | null;
}

/** Shows `value` unless it is older than the opening answer shown before it (a failure always shows). */
function passes(hold: Hold, value: Emission): boolean {
  if (hold.until === null) return true;
  const r = value as LookupResult<unknown>;
  if (r.error === null && (r.syncedAt === null || r.syncedAt < hold.until)) return false;
  hold.until = null; // caught up: from now on the engine's watch alone decides
  return true;
}

function note(hold: Hold, value: Emission): void {
  const r = value as LookupResult<unknown>;
  hold.shown = { syncedAt: r.syncedAt, failed: r.error !== null };
}

/** @example return answerWhileOpening({ listener, productNos, start, connectivity, assemble: (l) => opened.then((s) => assembleEngine(..., l)) }); */
export function answerWhileOpening(deps: WhileOpeningDeps): EngineApi {
  const { start, productNos } = deps;
  const holds = new Map<number, Hold>();
  const listener: WatchListener = (id, value) => {
    const hold = holds.get(id);
    if (hold) {
      if (!passes(hold, value)) return;
      note(hold, value);
    }
    deps.listener(id, value);
  };
  const engine = deps.assemble(listener);
  engine.catch(() => undefined); // told by every call
  let current: EngineApi | null = null;
  void engine.then((e) => (current = e), () => undefined);
  let started: NetworkStart | null = null;
  void start.then((s) => (started = s), () => undefined);
  const use = <T>(fn: (e: EngineApi) => Promise<T>): Promise<T> => engine.then(fn);

  function watchFirst(id: number, query: WatchQuery): Promise<Emission | null> {
    if (query.kind !== 'productOptions' || !productNos.includes(query.productNo)) return use((e) => e.watchFirst(id, query));
    const productNo = query.productNo;
    const hold: Hold = { shown: null, until: null };
    holds.set(id, hold);
    return new Promise((resolve, reject) => {
      let answered = false;
      const show = (value: Emission) => {
        note(hold, value);
        if (answered) return deps.listener(id, value);
        answered = true;
        resolve(value);
      };
      start
        .then((s) => s.opening?.answer(productNo) ?? null)
        .then((opening) => {
          // shown only if nothing as new (or a failure) was shown already, and the lookup is still followed
          if (!opening || holds.get(id) !== hold) return;
          if (hold.shown && (hold.shown.failed || (hold.shown.syncedAt ?? -Infinity) >= opening.syncedAt!)) return;
          hold.until = opening.syncedAt;
          show(opening);
        })
        .catch(() => undefined); // no opening answer: the engine's watch answers alone
      use((e) => e.watchFirst(id, query)).then(
        (first) => {
          if (first === null) {
            if (!answered) resolve(null);
            answered = true;
          } else if (passes(hold, first)) show(first);
        },
        (error: unknown) => {
          if (!answered) reject(error);
          answered = true;
        },
      );
    });
  }

  return {
    watchFirst,
    unwatch(id) {
      holds.delete(id);
      void use(async (e) => e.unwatch(id)).catch(() => undefined);
    },
    activeWatches: () => current?.activeWatches() ?? 0,
    setPersisted: (persisted) => void use(async (e) => e.setPersisted(persisted)).catch(() => undefined),
    setNetworkOnline: (online) => deps.connectivity.setOnline(online),
    validateCoupon: (code, order) => use((e) => e.validateCoupon(code, order)),
    offlineJournal: (page) => use((e) => e.offlineJournal(page)),
    clearOfflineJournal: (throughId) => use((e) => e.clearOfflineJournal(throughId)),
    // the host's sync() reads the API as of its ask: the opening reads, asked before, are no longer taken
    sync: () => {
      if (started) started.opening?.end();
      else void start.then((s) => s.opening?.end(), () => undefined);
      return use((e) => e.sync());
    },
    trackProducts: (nos) => use((e) => e.trackProducts(nos)),
    prefetchIssuedCoupons: (codes) => use((e) => e.prefetchIssuedCoupons(codes)),
    clear: (o) => use((e) => e.clear(o)),
    close: () => use((e) => e.close()),
  };
}
