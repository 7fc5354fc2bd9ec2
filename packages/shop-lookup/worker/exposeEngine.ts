// The engine exposed over Comlink on a worker's scope, answering the messages that arrived before it (worker.ts).
import { expose, type Endpoint } from 'comlink';
import { createWorkerApi } from './workerApi';

/** The worker scope as exposeEngine uses it (a DedicatedWorkerGlobalScope, or a MessagePort in tests). */
export type WorkerScope = Pick<Endpoint, 'postMessage' | 'addEventListener' | 'removeEventListener'>;

/**
 * Exposes a new engine on `scope`; `early` are the messages the scope received before (the host's `start` among
 * them), delivered to the engine first and in order.
 * @example exposeEngine(self, heldMessages);
 */
export function exposeEngine(scope: WorkerScope, early: readonly MessageEvent[] = []): void {
  const endpoint: Endpoint = {
    postMessage: (message, transfer) => scope.postMessage(message, transfer),
    addEventListener(type, listener, options) {
      scope.addEventListener(type, listener, options);
      if (type !== 'message') return;
      for (const event of early) {
        if (typeof listener === 'function') listener(event);
        else listener.handleEvent(event);
      }
    },
    removeEventListener: (type, listener, options) => scope.removeEventListener(type, listener, options),
  };
  expose(createWorkerApi(), endpoint);
}
