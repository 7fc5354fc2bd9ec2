// One scheduler for every request the engine makes, so it stays within the API's documented limits
// (list calls 1/s, all others 5/s, per shop) instead of drawing 429s. A lookup somebody is waiting for
// ('user') goes ahead of queued background sync work.
import type { RateLimits } from '../src/types';
import { ShopLookupError } from '../src/errors';

export type RequestClass = 'list' | 'other';
export type Priority = 'user' | 'background';

export interface RateLimiter {
  /** Resolves when a request of this class may start. */
  acquire(cls: RequestClass, priority: Priority, signal?: AbortSignal): Promise<void>;
  /** Nobody of this class starts before `ms` from now (after a 429 with Retry-After). */
  pause(cls: RequestClass, ms: number): void;
  /** Rejects everything queued (engine closing). */
  dispose(): void;
}

export interface RateLimiterDeps {
  now?: () => number;
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  /** Added to the 1 s window: the server sees arrival times, we see send times. */
  marginMs?: number;
}

interface Waiter {
  priority: Priority;
  resolve: () => void;
  reject: (e: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

const WINDOW_MS = 1000;
export const DEFAULT_RATE_LIMITS = { list: 1, other: 5 } as const;

/** @example const limiter = createRateLimiter({ list: 1, other: 5 }); await limiter.acquire('list', 'background'); */
export function createRateLimiter(limits: RateLimits | false, deps: RateLimiterDeps = {}): RateLimiter {
  const now = deps.now ?? (() => Date.now());
  const setTimer = deps.setTimeout ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = deps.clearTimeout ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  const margin = deps.marginMs ?? 50;

  const classes = (['list', 'other'] as const).map((cls) => ({
    cls,
    limit: limits === false ? Infinity : (limits[cls] ?? DEFAULT_RATE_LIMITS[cls]),
    starts: [] as number[], // start times of the last `limit` requests, oldest first
    pausedUntil: 0,
    queue: [] as Waiter[],
    timer: undefined as unknown,
  }));
  const byName = (cls: RequestClass) => classes[cls === 'list' ? 0 : 1]!;

  function pump(c: (typeof classes)[number]): void {
    if (c.timer !== undefined) {
      clearTimer(c.timer);
      c.timer = undefined;
    }
    while (c.queue.length > 0) {
      const t = now();
      const windowFree = c.starts.length < c.limit ? t : c.starts[0]! + WINDOW_MS + margin;
      const at = Math.max(windowFree, c.pausedUntil);
      if (at > t) {
        c.timer = setTimer(() => pump(c), at - t);
        return;
      }
      const waiter = c.queue.shift()!;
      if (Number.isFinite(c.limit)) {
        c.starts.push(t);
        if (c.starts.length > c.limit) c.starts.shift();
      }
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
  }

  return {
    acquire(cls, priority, signal) {
      const c = byName(cls);
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { priority, resolve, reject, signal, onAbort: undefined };
        if (signal) {
          waiter.onAbort = () => {
            c.queue = c.queue.filter((w) => w !== waiter);
            reject(signal.reason);
          };
          signal.addEventListener('abort', waiter.onAbort, { once: true });
        }
        // user work goes ahead of every queued background request, behind earlier user requests
        const at = priority === 'user' ? c.queue.findIndex((w) => w.priority !== 'user') : -1;
        if (at === -1) c.queue.push(waiter);
        else c.queue.splice(at, 0, waiter);
        pump(c);
      });
    },
    pause(cls, ms) {
      const c = byName(cls);
      c.pausedUntil = Math.max(c.pausedUntil, now() + ms);
      pump(c);
    },
    dispose() {
      for (const c of classes) {
        if (c.timer !== undefined) clearTimer(c.timer);
        c.timer = undefined;
        const queued = c.queue.splice(0);
        for (const w of queued) w.reject(new ShopLookupError('closed', 'shop-lookup was closed.'));
      }
    },
  };
}
