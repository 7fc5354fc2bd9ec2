// Whether the API can be reached right now: the platform's online flag (navigator.onLine and the online/offline
// events, read on `globalThis` because a worker has no window) AND what our own requests saw. A refused or timed
// out request marks the API unreachable at once; any answer marks it reachable again.
import { observableState, type ObservableState } from './observableState';

interface ConnectivityState {
  /** The platform says there is a network. */
  online: boolean;
  /** Our last request got an answer (or none was made yet). */
  reachable: boolean;
}

export interface Connectivity extends ObservableState<ConnectivityState> {
  readonly offline: boolean;
  reportAnswer(): void;
  reportUnreachable(): void;
  /** The page's own online/offline events (Chromium does not fire them in workers), forwarded. */
  setOnline(online: boolean): void;
  dispose(): void;
}

/** Where online/offline events come from; swappable in tests. */
export interface OnlineSource {
  readonly navigator?: { onLine?: boolean };
  addEventListener?: (type: 'online' | 'offline', fn: () => void) => void;
  removeEventListener?: (type: 'online' | 'offline', fn: () => void) => void;
}

/** @example const c = createConnectivity(globalThis); c.subscribe(({ online }) => ...); */
export function createConnectivity(source: OnlineSource = globalThis as OnlineSource): Connectivity {
  const read = () => source.navigator?.onLine !== false;
  const state = observableState<ConnectivityState>({ online: read(), reachable: true });
  // coming back online, give the API another chance: our last failure was probably the missing network
  const onChange = () => state.set(read() ? { online: true, reachable: true } : { online: false });
  source.addEventListener?.('online', onChange);
  source.addEventListener?.('offline', onChange);
  return {
    ...state,
    get offline() {
      const s = state.get();
      return !s.online || !s.reachable;
    },
    // an answer proves there is a network, whatever navigator.onLine said (a worker may never get the events)
    reportAnswer: () => state.set({ online: true, reachable: true }),
    reportUnreachable: () => state.set({ online: read(), reachable: false }),
    setOnline: (online) => state.set(online ? { online: true, reachable: true } : { online: false }),
    dispose() {
      source.removeEventListener?.('online', onChange);
      source.removeEventListener?.('offline', onChange);
    },
  };
}
