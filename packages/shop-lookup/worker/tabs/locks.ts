// Web Locks (navigator.locks) for leader election and for one sync at a time across tabs. Where the platform has
// none (Node, old browsers), an equivalent exclusive lock within this JavaScript realm stands in, so several
// engines on one database in one process (tests, SSR) still take turns.

export interface LockManagerLike {
  request<T>(name: string, options: { signal?: AbortSignal }, callback: () => Promise<T>): Promise<T>;
}

const queues = new Map<string, Promise<unknown>>();

/**
 * An exclusive, FIFO lock per name within this realm.
 * @example await realmLocks.request('a', {}, async () => work());
 */
export const realmLocks: LockManagerLike = {
  request(name, options, callback) {
    const before = queues.get(name) ?? Promise.resolve();
    const { signal } = options;
    let aborted = signal?.aborted === true;
    let leave: (reason: unknown) => void = () => undefined;
    // as with Web Locks, a wait that is aborted rejects at once (its turn in the queue then passes unused)
    const left = new Promise<never>((_, reject) => (leave = reject));
    const onAbort = () => {
      aborted = true;
      leave(signal!.reason);
    };
    const turn = before.then(() => {
      signal?.removeEventListener('abort', onAbort);
      if (aborted) throw signal!.reason;
      return callback();
    });
    const settled = turn.catch(() => undefined);
    queues.set(name, settled);
    void settled.then(() => {
      if (queues.get(name) === settled) queues.delete(name);
    });
    if (aborted) return Promise.reject(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    return Promise.race([turn, left]);
  },
};

/** The platform's Web Locks where present, else the realm lock. */
export function platformLocks(): LockManagerLike {
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  return locks ?? realmLocks;
}
