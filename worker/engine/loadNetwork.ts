// Loads the engine's network side (createNetwork.ts, a chunk of its own) beside opening the database, and starts
// the relay's live long-poll once it is in.
import type { NetworkModule } from '../lookups/lookupPlans';
import type { Network, NetworkDeps } from './createNetwork';
import type { EngineCore } from './engineCore';

/** The network side with the module it came from (the refreshes of lookupPlans.ts run through it). */
export type LoadedNetwork = Network & { module: NetworkModule };

export interface LoadNetworkDeps extends EngineCore, NetworkDeps {
  /** A full sync (the relay's feed asks for one when it has to start again); resolves ok or not. */
  resync(): Promise<boolean>;
}

export interface NetworkLoad {
  /** Rejects when the chunk could not load: whatever needs it reports that. */
  network: Promise<LoadedNetwork>;
  /** The network side once loaded, else null. */
  current(): LoadedNetwork | null;
  /** Stops the relay's live long-poll (if it started). */
  dispose(): void;
}

/** @example const load = loadNetwork({ ...core, fetch, trackedProducts, shop, exclusive, resync }); (await load.network).runner.sync(); */
export function loadNetwork(deps: LoadNetworkDeps): NetworkLoad {
  const { status, signal } = deps;
  let current: LoadedNetwork | null = null;
  // Starting now: the first answer from IndexedDB does not wait for it, and it is in memory well before a sync.
  const network: Promise<LoadedNetwork> = import('./createNetwork').then((module) => ({ module, ...module.createNetwork(deps) }));
  network.then((n) => (current = n), () => undefined); // a failure is reported by whatever needs it
  // Is baseUrl a relay? Asked once at start (cached; asked again by the next sync if no answer came). With a relay,
  // the leader keeps a long-poll open for live changes (relayLive.ts).
  const live = network.then((net) => {
    net.chooser.choose(signal).then((c) => status.facts.set({ source: c.kind }), () => undefined);
    return net.module.startRelayLive({
      poll: (waitS, s) => net.relay.poll(waitS, s),
      isRelay: () => net.chooser.current === 'relay',
      resync: deps.resync,
      leadership: deps.leadership,
      connectivity: deps.connectivity,
      onChange: (l) => status.facts.subscribe(l),
      signal,
    });
  });
  live.catch(() => undefined);
  return {
    network,
    current: () => current,
    dispose: () => void live.then((l) => l.dispose(), () => undefined),
  };
}
