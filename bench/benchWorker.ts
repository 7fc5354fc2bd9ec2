// The bench's worker: the engine exactly as the shipped entry (worker/worker.ts) exposes it on the worker's own
// scope (for `createShopLookup({ worker: () => thisWorker })`), plus the baseline probes on a MessagePort the page
// sends first (benchProbesPort.ts, evaluated first so its listener comes before the entry's).
import './benchProbesPort';
import '../packages/shop-lookup/worker/worker';
