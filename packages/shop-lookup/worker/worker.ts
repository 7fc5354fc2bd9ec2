// The worker entry (`shop-lookup/worker`): holds the messages that arrive while the engine's code loads, then
// exposes the engine over Comlink on this worker's global scope (exposeEngine.ts).
// Hosts that create the worker themselves:
//   createShopLookup({ baseUrl, worker: () => new Worker(new URL('shop-lookup/worker', import.meta.url), { type:
// 'module' }) })
//
// This file imports nothing, on purpose. WebKit (Safari, every iPad) evaluates a module worker's entry a second
// time when another chunk of that worker imports it, and a bundler that splits the worker (Vite and Rollup with
// `worker: { format: 'es' }`, webpack) makes the lazily loaded chunks import what they share from the entry chunk.
// The second copy exposed a second, never-started engine on the same scope, which answered every call after the
// first sync with `not_started`. With an entry that imports nothing, every shared piece lives in the chunk of
// exposeEngine.ts or a chunk of its own, and the entry is evaluated once.
const early: MessageEvent[] = [];
const hold = (event: MessageEvent): void => void early.push(event);
self.addEventListener('message', hold);

import('./exposeEngine').then(
  ({ exposeEngine }) => {
    self.removeEventListener('message', hold);
    // a worker's scope (DedicatedWorkerGlobalScope), which the project's DOM typings call Window
    exposeEngine(self as unknown as WorkerScope, early);
  },
  (error: unknown) => {
    // thrown in a task of its own, it reaches the host's Worker as an error event: createShopLookup then rejects
    // with worker_failed instead of waiting for an answer that never comes
    setTimeout(() => {
      throw error;
    });
  },
);

type WorkerScope = import('./exposeEngine').WorkerScope;

// a module with nothing to export: `import 'shop-lookup/worker'` type-checks
export {};
