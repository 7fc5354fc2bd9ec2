// Exactly one engine per database runs background syncs: the one holding the leader lock. The lock is held until
// this engine closes (or its tab does), and then the next waiting engine gets it, within moments.
import type { LockManagerLike } from './locks';
import { observableState } from './observableState';

export interface Leadership {
  readonly isLeader: boolean;
  subscribe(listener: (isLeader: boolean) => void): () => void;
  /** Gives the lock up (or stops waiting for it). */
  dispose(): void;
}

/** @example const leadership = electLeader(platformLocks(), 'shop-lookup:my-shop:leader'); */
export function electLeader(locks: LockManagerLike, name: string): Leadership {
  const state = observableState({ isLeader: false });
  const stop = new AbortController();
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  locks
    .request(name, { signal: stop.signal }, async () => {
      if (stop.signal.aborted) return;
      state.set({ isLeader: true });
      await held;
    })
    .catch(() => undefined); // aborted while waiting: this engine closed before its turn
  return {
    get isLeader() {
      return state.get().isLeader;
    },
    subscribe: (listener) => state.subscribe((s) => listener(s.isLeader)),
    dispose() {
      stop.abort(new Error('engine closed'));
      state.set({ isLeader: false });
      release();
    },
  };
}
