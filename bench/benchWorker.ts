// The bench's worker: the engine exactly as worker/worker.ts exposes it (on the worker's own scope, for
// `createShopLookup({ worker: () => thisWorker })`), plus the baseline probes on a MessagePort the page sends first.
import { expose } from 'comlink';
import { createWorkerApi } from '../worker/workerApi';
import { createProbes } from './probes';

// Registered before Comlink's own listener, so the port message never reaches the engine's endpoint.
self.addEventListener('message', (event: MessageEvent) => {
  const port = (event.data as { benchProbes?: MessagePort } | null)?.benchProbes;
  if (!port) return;
  event.stopImmediatePropagation();
  expose(createProbes(), port);
});

expose(createWorkerApi());
