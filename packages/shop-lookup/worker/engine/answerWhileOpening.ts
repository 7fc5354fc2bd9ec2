// A storefront's engine while its database opens. A shopper's product page is most often a first visit: nothing is
// stored yet, and opening IndexedDB takes longer than reading the product. So the engine is usable at once, and a
// productOptions lookup of a tracked product shows the opening read's answer (sync/openingReads.ts) as soon as it
// arrives; every other call waits for the engine assembled on the open database. That database opens once the
// opening reads have answered: setting it up and assembling the engine on it keep this thread busy for
// milliseconds, which would hold the first answer back; a read that takes longer (a slow network) holds it
// OPENING_WAIT_MS at most. The assembled engine's watch then takes over, but what it shows older than that answer
// (the empty database, before the answer is stored) is held back, its offline and fetching flags passed on with the
// newer data: a lookup never goes back to older data. A failure it reports is shown at once.
import type { EngineApi, LookupResult, SyncStatus, WatchListener, WatchQuery } from '../../src/protocol';
import type { OpeningReads } from '../sync/openingReads';
import type { Connectivity } from '../tabs/connectivity';

/** How long a storefront's database waits for its opening reads before it opens anyway (a slow network). */
const OPENING_WAIT_MS = 50;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Emission = LookupResult<unknown> | SyncStatus;

export interface WhileOpeningDeps {
  listener: WatchListener;
  /** Products whose options the opening reads cover. */
  productNos: readonly number[];
  /** The start's opening reads (startNetworkEarly.ts). */
  opening: OpeningReads;
  connectivity: Connectivity;
  /**
   * Opens the database and the engine on it, given the listener to tell (its emissions pass the hold described
   * above).
   */
  assemble(listener: WatchListener): Promise<EngineApi>;
}

/** One lookup answered from an opening read, until the engine's watch reaches that answer. */
interface Hold {
  /** What the lookup last showed. */
  shown: LookupResult<unknown> | null;
  /** While set, the opening answer shown: the engine's emissions older than it are not shown as they are. */
  opening: LookupResult<unknown> | null;
}

/**
 * What the lookup shows of the engine's `value`: itself; or, while it is older than the opening answer shown before
 * (a failure always shows), that answer with the value's offline and fetching flags, if they changed; else nothing.
 */
function shows(hold: Hold, value: Emission): Emission | null {
  const r = value as LookupResult<unknown>;
  const opening = hold.opening;
  if (opening === null) return value;
  if (r.error !== null || (r.syncedAt !== null && r.syncedAt >= opening.syncedAt!)) {
    hold.opening = null; // caught up: from now on the engine's watch alone decides
    return value;
  }
  const shown = hold.shown ?? opening;
  if (shown.offline === r.offline && shown.fetching === r.fetching) return null;
  return { ...opening, offline: r.offline, fetching: r.fetching };
}

/**
 * @example return answerWhileOpening({ listener, productNos, opening, connectivity, assemble: (l) => open().then((s)
 * => assembleEngine(..., l)) });
 */
export function answerWhileOpening(deps: WhileOpeningDeps): EngineApi {
  const { opening, productNos } = deps;
  const holds = new Map<number, Hold>();
  const listener: WatchListener = (id, value) => {
    const hold = holds.get(id);
    const shown = hold ? shows(hold, value) : value;
    if (shown === null) return;
    if (hold) hold.shown = shown as LookupResult<unknown>;
    deps.listener(id, shown);
  };
  // (one task after the answers: they have reached the lookups by then)
  const answered = Promise.race([opening.settled.then(() => delay(0)), delay(OPENING_WAIT_MS)]);
  const engine = answered.then(() => deps.assemble(listener));
  engine.catch(() => undefined); // told by every call
  let current: EngineApi | null = null;
  void engine.then(
    (e) => (current = e),
    () => undefined,
  );
  const use = <T>(fn: (e: EngineApi) => Promise<T>): Promise<T> => engine.then(fn);

  function watchFirst(id: number, query: WatchQuery): Promise<Emission | null> {
    if (query.kind !== 'productOptions' || !productNos.includes(query.productNo))
      return use((e) => e.watchFirst(id, query));
    const productNo = query.productNo;
    const hold: Hold = { shown: null, opening: null };
    holds.set(id, hold);
    return new Promise((resolve, reject) => {
      let answered = false;
      const show = (value: Emission) => {
        hold.shown = value as LookupResult<unknown>;
        if (answered) return deps.listener(id, value);
        answered = true;
        resolve(value);
      };
      void opening.answer(productNo).then((answer) => {
        // shown only if nothing as new (or a failure) was shown already, and the lookup is still followed
        if (!answer || holds.get(id) !== hold) return;
        if (hold.shown && (hold.shown.error !== null || (hold.shown.syncedAt ?? -Infinity) >= answer.syncedAt!)) return;
        hold.opening = answer;
        show(answer);
      });
      use((e) => e.watchFirst(id, query)).then(
        (first) => {
          if (first === null) {
            if (!answered) resolve(null);
            answered = true;
          } else {
            const shown = shows(hold, first);
            if (shown !== null) show(shown);
          }
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
    releaseCoupon: (code, order) => use((e) => e.releaseCoupon(code, order)),
    offlineJournal: (page) => use((e) => e.offlineJournal(page)),
    clearOfflineJournal: (throughId) => use((e) => e.clearOfflineJournal(throughId)),
    exportJournal: (options) => use((e) => e.exportJournal(options)),
    refresh: (target) => use((e) => e.refresh(target)),
    inspect: (options) => use((e) => e.inspect(options)),
    // the host's sync() reads the API as of its ask: the opening reads, asked before, are no longer taken
    sync: () => {
      opening.end();
      return use((e) => e.sync());
    },
    trackProducts: (nos) => use((e) => e.trackProducts(nos)),
    prefetchIssuedCoupons: (codes) => use((e) => e.prefetchIssuedCoupons(codes)),
    clear: (o) => use((e) => e.clear(o)),
    close: () => use((e) => e.close()),
  };
}
