// What the worker exposes over Comlink: the engine, started with the host's options and its one listener.
import { releaseProxy } from 'comlink';
import { ShopLookupError, toLookupError } from '../src/protocol';
import type { AskToken, EngineApi, WatchListener, WorkerApi } from '../src/protocol';
import { createEngine, type EngineDeps } from './engine/createEngine';

/**
 * A rejection as plain `{ code, message, ... }` data: Comlink sends an Error across as its name and message only,
 * and the caller must still find its `code`.
 */
const asData = <T>(work: Promise<T>): Promise<T> =>
  work.catch((error: unknown) => {
    throw toLookupError(error);
  });

/** @example expose(createWorkerApi({ indexedDB: self.indexedDB })); */
export function createWorkerApi(deps: EngineDeps = {}): WorkerApi {
  let engine: EngineApi | null = null;
  let remoteListener: WatchListener | null = null;
  let remoteAsker: AskToken | undefined;
  const started = (): EngineApi => {
    if (!engine)
      throw new ShopLookupError('not_started', 'The shop-lookup worker was used before start() or after close().');
    return engine;
  };
  return {
    async start(options, listener, askToken) {
      if (engine || remoteListener)
        throw new ShopLookupError(
          'already_started',
          'This shop-lookup worker is already started; create one worker per createShopLookup.',
        );
      remoteListener = listener;
      remoteAsker = askToken;
      // a Comlink call returns a promise; if the page is gone it rejects, which must not become an unhandled rejection
      const tell: WatchListener = (id, value) => void Promise.resolve(listener(id, value)).catch(() => undefined);
      // Comlink copies every emission: the engine may share one read of a list between watches
      engine = await createEngine(options, tell, { copiesEmissions: true, ...deps, ...(askToken && { askToken }) });
    },
    watchFirst: (id, query) => started().watchFirst(id, query),
    unwatch: (id) => started().unwatch(id),
    sync: () => started().sync(),
    trackProducts: (nos) => asData(started().trackProducts(nos)),
    prefetchIssuedCoupons: (codes) => started().prefetchIssuedCoupons(codes),
    validateCoupon: (code, order) => asData(started().validateCoupon(code, order)),
    releaseCoupon: (code, order) => asData(started().releaseCoupon(code, order)),
    offlineJournal: (page) => asData(started().offlineJournal(page)),
    clearOfflineJournal: (throughId) => asData(started().clearOfflineJournal(throughId)),
    exportJournal: (options) => asData(started().exportJournal(options)),
    refresh: (target) => asData(started().refresh(target)),
    inspect: (options) => asData(started().inspect(options)),
    clear: (o) => asData(started().clear(o)),
    activeWatches: () => engine?.activeWatches() ?? 0,
    setPersisted: (persisted) => started().setPersisted(persisted),
    setNetworkOnline: (online) => started().setNetworkOnline(online),
    async close() {
      await engine?.close();
      engine = null;
      // the listener and the token asker are the Comlink proxies this connection holds: release their MessagePorts
      for (const remote of [remoteListener, remoteAsker])
        (remote as unknown as { [releaseProxy]?: () => void } | undefined)?.[releaseProxy]?.();
      remoteListener = null;
      remoteAsker = undefined;
    },
  };
}
