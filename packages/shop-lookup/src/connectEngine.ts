// Reaching the engine: a module Worker through Comlink (default in browsers), an endpoint the host made, or
// the same engine in this thread (`worker: false`: Node, SSR, tests), loaded lazily so the main bundle stays small,
// and left out of an app's build that defines __SHOP_LOOKUP_IN_THREAD__ as false.
import { proxy, releaseProxy, wrap, type Remote } from 'comlink';
import { ShopLookupError } from './errors';
import type { AskToken, EngineApi, EngineOptions, WatchListener, WorkerApi } from './protocol';
import type { EngineEndpoint, ShopLookupOptions } from './types';

/**
 * Whether the app's build carries the engine for this thread (`worker: false`, or where there is no Worker). Unset
 * (nobody defines it: the default) it does. An app whose engine always runs in its worker defines it as `false` in
 * its bundler (Vite: `define: { __SHOP_LOOKUP_IN_THREAD__: false }`, docs/embedding.md, "Bundlers"): the bundler
 * then drops the engine's `import()` below, so it never builds or precaches a second copy of the engine for the page.
 */
declare const __SHOP_LOOKUP_IN_THREAD__: boolean | undefined;

export interface Connection {
  api: EngineApi | Remote<WorkerApi>;
  /** Drops the Comlink proxy and ends a worker this module started. */
  dispose(): void;
}

function engineOptionsOf(o: ShopLookupOptions): EngineOptions {
  const { worker: _w, indexedDB: _i, IDBKeyRange: _k, fetch: _f, persist: _p, token: _t, ...rest } = o;
  return rest;
}

/** The `token` option as the engine asks for it (the token stays out of the options, which could be kept or logged). */
const askerOf = (token: ShopLookupOptions['token']): AskToken | undefined =>
  token === undefined ? undefined : async () => (typeof token === 'function' ? token() : token);

function workerFailed(detail: string): ShopLookupError {
  return new ShopLookupError(
    'worker_failed',
    `The shop-lookup worker could not start (${detail}). Pass \`worker: () => new Worker(new URL('shop-lookup/worker', ` +
      'import.meta.url), { type: \'module\' })` or `worker: false` (docs/embedding.md, "Bundlers").',
  );
}

/**
 * The default worker. Keep this expression literal: from source, Vite's dev server (the demo, the e2e tests) loads
 * worker/worker.ts through it; `npm run build` rewrites it to `new URL('./worker.js', import.meta.url)` pointing at
 * the shipped worker entry (vite.config.ts, literalWorkerUrl), the pattern the app's bundler follows to bundle it.
 */
function startWorker(): Worker {
  return new Worker(new URL('../worker/worker.ts', import.meta.url), { type: 'module', name: 'shop-lookup' });
}

/** @example const c = await connectEngine(options, listener); await c.api.sync(); c.dispose(); */
export async function connectEngine(options: ShopLookupOptions, listener: WatchListener): Promise<Connection> {
  const mode = options.worker ?? typeof Worker !== 'undefined';
  const askToken = askerOf(options.token);
  if (mode === false) {
    // (with the flag defined false, the bundler folds this test to false and drops the engine's import())
    if (typeof __SHOP_LOOKUP_IN_THREAD__ === 'undefined' || __SHOP_LOOKUP_IN_THREAD__) {
      const { createEngine } = await import('../worker/engine/createEngine');
      // (the options' platform pieces, indexedDB, IDBKeyRange and fetch, are the engine's dependencies of those names)
      const api = await createEngine(engineOptionsOf(options), listener, { ...options, askToken });
      return { api, dispose: () => undefined };
    }
    throw new ShopLookupError(
      'bad_options',
      '`worker: false` (or no Worker) needs __SHOP_LOOKUP_IN_THREAD__ not false (docs/embedding.md, "Bundlers").',
    );
  }
  if (options.fetch) {
    throw new ShopLookupError(
      'bad_options',
      'options.fetch cannot cross into a worker: use `worker: false`, or point baseUrl at a proxy.',
    );
  }
  const endpoint: EngineEndpoint = mode === true ? startWorker() : mode();
  const remote = wrap<WorkerApi>(endpoint);
  const listenerProxy = proxy(listener);
  const dispose = () => {
    remote[releaseProxy]();
    if (mode === true) (endpoint as Worker).terminate();
  };
  // a worker that fails to load never answers: its error event must end the wait
  const failed = new Promise<never>((_, reject) => {
    endpoint.addEventListener('error' as 'message', (e: Event) =>
      reject(workerFailed((e as ErrorEvent).message || 'error event')),
    );
  });
  try {
    await Promise.race([remote.start(engineOptionsOf(options), listenerProxy, askToken && proxy(askToken)), failed]);
  } catch (error) {
    dispose();
    throw (error as { code?: string }).code ? error : workerFailed(String((error as Error)?.message ?? error));
  }
  return { api: remote, dispose };
}
