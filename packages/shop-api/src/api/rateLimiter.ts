// One scheduler for every request the engine makes, so it stays within the API's documented limits
// (list calls 1/s, all others 5/s, per shop) instead of drawing 429s. A lookup somebody is waiting for
// ('user') goes ahead of queued background sync work.
import type { RateLimits } from '../types';
import { DEFAULT_RATE_LIMITS } from '../defaults';
import { ShopLookupError } from '../errors';
import type { RateLimiter, RequestClass } from './rateLimiterTypes';
import { createWaiterQueue } from './waiterQueue';

export type { Priority, RateLimiter, RequestClass } from './rateLimiterTypes';

export interface RateLimiterDeps {
  now?: () => number;
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  /** Added to the 1 s window: the server sees arrival times, we see send times. */
  marginMs?: number;
}

const WINDOW_MS = 1000;

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
    queue: createWaiterQueue(() => pump(byName(cls))),
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
      if (Number.isFinite(c.limit)) {
        c.starts.push(t);
        if (c.starts.length > c.limit) c.starts.shift();
      }
      c.queue.release();
    }
  }

  return {
    acquire(cls, priority, signal) {
      return byName(cls).queue.wait(priority, signal);
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
        c.queue.rejectAll(new ShopLookupError('closed', 'shop-lookup was closed.'));
      }
    },
  };
}
