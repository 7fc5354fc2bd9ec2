// The worker entry (`shop-lookup/worker`): exposes the engine over Comlink on this worker's global scope.
import { expose } from 'comlink';
import { createWorkerApi } from './workerApi';

expose(createWorkerApi());
