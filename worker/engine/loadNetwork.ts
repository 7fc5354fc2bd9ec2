// Loads the engine's network side (createNetwork.ts, a chunk of its own) and keeps it at hand once it is in.
// Loading starts at once, beside opening the database: the first answer from IndexedDB does not wait for it.
import type { Network, NetworkDeps } from './createNetwork';
import type { EngineCore } from './engineCore';

/** The lazily loaded chunk itself: its refreshes are what lookup plans run (lookupPlans' RefreshUnits). */
export type NetworkModule = typeof import('./createNetwork');

/** The network side with the module it came from. */
export type LoadedNetwork = Network & { module: NetworkModule };

export interface NetworkLoad {
  /** Rejects when the chunk could not load: whatever needs it reports that. */
  network: Promise<LoadedNetwork>;
  /** The network side once loaded, else null. */
  current(): LoadedNetwork | null;
  /** Stops the relay's live long-poll (if it started). */
  dispose(): void;
}

/** @example const load = loadNetwork({ ...core, fetch, trackedProducts, shop, exclusive, resync }); (await load.network).runner.sync(); */
export function loadNetwork(deps: EngineCore & NetworkDeps): NetworkLoad {
  let current: LoadedNetwork | null = null;
  const network: Promise<LoadedNetwork> = import('./createNetwork').then((module) => ({ module, ...module.createNetwork(deps) }));
  network.then((n) => (current = n), () => undefined); // a failure is reported by whatever needs it
  return {
    network,
    current: () => current,
    dispose: () => void network.then((n) => n.live.dispose(), () => undefined),
  };
}
