// The worker entry (`shop-lookup/worker`): exposes the engine over Comlink on this worker's global scope.
// Hosts that create the worker themselves:
//   createShopLookup({ baseUrl, worker: () => new Worker(new URL('shop-lookup/worker', import.meta.url), { type: 'module' }) })
import { expose } from 'comlink';
import { createWorkerApi } from './workerApi';

expose(createWorkerApi());
