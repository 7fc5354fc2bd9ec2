// The requests waiting for a rate limiter's go, shared by the engine's limiter and the relay's Redis-backed one:
// user requests go ahead of queued background work, an aborted wait leaves the queue, dispose rejects everyone.
import type { Priority } from './rateLimiter';

interface Waiter {
  priority: Priority;
  resolve: () => void;
  reject: (e: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

export interface WaiterQueue {
  readonly length: number;
  /** Queues a request; resolves when `release()` lets it go, rejects with the signal's reason on abort. */
  wait(priority: Priority, signal?: AbortSignal): Promise<void>;
  /** Lets the first waiter go; false when nobody waits. */
  release(): boolean;
  /** Rejects every waiter with `error`. */
  rejectAll(error: unknown): void;
}

/**
 * @example const queue = createWaiterQueue(() => pump()); await queue.wait('user'); // pump() calls queue.release()
 */
export function createWaiterQueue(onQueued: () => void): WaiterQueue {
  let queue: Waiter[] = [];
  return {
    get length() {
      return queue.length;
    },
    wait(priority, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { priority, resolve, reject, signal, onAbort: undefined };
        if (signal) {
          waiter.onAbort = () => {
            queue = queue.filter((w) => w !== waiter);
            reject(signal.reason);
          };
          signal.addEventListener('abort', waiter.onAbort, { once: true });
        }
        // user work goes ahead of every queued background request, behind earlier user requests
        const at = priority === 'user' ? queue.findIndex((w) => w.priority !== 'user') : -1;
        if (at === -1) queue.push(waiter);
        else queue.splice(at, 0, waiter);
        onQueued();
      });
    },
    release() {
      const waiter = queue.shift();
      if (!waiter) return false;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
      return true;
    },
    rejectAll(error) {
      for (const w of queue.splice(0)) w.reject(error);
    },
  };
}
