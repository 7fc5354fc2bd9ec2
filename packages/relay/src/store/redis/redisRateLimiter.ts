// The upstream rate limiter shared by every relay instance on one Redis, in the engine's RateLimiter interface.
// rate-limiter-flexible's RateLimiterRedis counts: a class allowed N requests per second has N "lanes" of 1 point per
// second each, so any sliding second holds at most N starts, which is how the API counts (a plain N-point fixed
// window would let 2N through around a window's edge). Its windows are whole seconds and the API sees arrival
// times, so a taken lane is held `marginMs` longer. `pause(cls, ms)` after a 429 is a Redis key with PX: it holds
// every instance. While Redis is away, an in-memory limiter of the same shape stands in (insuranceLimiter).
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import {
  createWaiterQueue,
  DEFAULT_RATE_LIMITS,
  type RateLimiter,
  type RequestClass,
  ShopLookupError,
  type WaiterQueue,
} from '@shop-lookup/shop-api';
import type { RedisClient } from './redisConnection';
import type { RedisKeys } from './redisKeys';

export interface RedisRateLimiterOptions {
  client: RedisClient;
  keys: RedisKeys;
  /** Requests per second for all instances together; false: no limit. Default { list: 1, other: 5 }. */
  limits: { list: number; other: number } | false;
  /**
   * Added to each lane's second, ms. Default 200: the API counts arrival times, and a request granted at t may
   * leave a busy relay (or be read by a busy API) tens of ms later than the next one granted at t + 1 s; the
   * scale test saw up to 80 ms of such lag at 50 ms margin. Costs a sixth of the list rate (1 call per 1.2 s).
   */
  marginMs?: number;
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  now?: () => number;
}

interface ClassState {
  cls: RequestClass;
  lanes: number;
  limiter: RateLimiterRedis | null;
  nextLane: number;
  pausedUntil: number;
  queue: WaiterQueue;
  running: boolean;
  timer: unknown;
  wake: (() => void) | undefined;
}

const WINDOW_MS = 1000;
const DEFAULT_MARGIN_MS = 200;

/**
 * Holds every instance's next upstream call of each class for one window (plus the margin). For a Redis found
 * without the shop's history (flushed, or restarted without its data): it forgot the lanes, that is the calls made
 * in the last second, and an instance listing again at once would be the API's second call within its second.
 * @example await holdRateLimits(client, keys, 200);
 */
export async function holdRateLimits(
  client: RedisClient,
  keys: RedisKeys,
  marginMs = DEFAULT_MARGIN_MS,
): Promise<void> {
  await Promise.all(
    (['list', 'other'] as const).map((cls) => client.set(keys.pause(cls), '1', { NX: true, PX: WINDOW_MS + marginMs })),
  );
}

/**
 * @example const limiter = createRedisRateLimiter({ client, keys, limits: { list: 1, other: 5 } });
 * await limiter.acquire('list', 'background');
 */
export function createRedisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
  const { client, keys } = options;
  const margin = options.marginMs ?? DEFAULT_MARGIN_MS;
  const setTimer = options.setTimeout ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimeout ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  const now = options.now ?? (() => Date.now());
  let disposed = false;

  const classes = (['list', 'other'] as const).map((cls): ClassState => {
    const lanes = options.limits === false ? Infinity : (options.limits[cls] ?? DEFAULT_RATE_LIMITS[cls]);
    const limiter = Number.isFinite(lanes)
      ? new RateLimiterRedis({
          storeClient: client,
          useRedisPackage: true,
          rejectIfRedisNotReady: true,
          keyPrefix: keys.rateLimit(cls),
          points: 1,
          duration: WINDOW_MS / 1000,
          insuranceLimiter: new RateLimiterMemory({ points: 1, duration: WINDOW_MS / 1000 }),
        })
      : null;
    const queue = createWaiterQueue(() => void pump(byName(cls)));
    return {
      cls,
      lanes,
      limiter,
      nextLane: 0,
      pausedUntil: 0,
      queue,
      running: false,
      timer: undefined,
      wake: undefined,
    };
  });
  const byName = (cls: RequestClass): ClassState => classes[cls === 'list' ? 0 : 1]!;

  /** 0 when a lane was taken, else ms to wait before trying again. */
  async function take(c: ClassState): Promise<number> {
    const localPause = c.pausedUntil - now();
    const sharedPause = await client.pTTL(keys.pause(c.cls)).then(Number, () => -2);
    if (localPause > 0 || sharedPause > 0) return Math.max(localPause, sharedPause);
    let wait = WINDOW_MS;
    for (let i = 0; i < c.lanes; i++) {
      const lane = String((c.nextLane + i) % c.lanes);
      try {
        await c.limiter!.consume(lane);
        c.nextLane = (c.nextLane + i + 1) % c.lanes;
        await client.pExpire(c.limiter!.getKey(lane), WINDOW_MS + margin).catch(() => undefined);
        return 0;
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) return WINDOW_MS / 4; // the store failed and the insurance too: retry
        wait = Math.min(wait, res.msBeforeNext);
      }
    }
    return Math.max(1, wait);
  }

  function sleep(c: ClassState, ms: number): Promise<void> {
    return new Promise((resolve) => {
      c.wake = resolve;
      c.timer = setTimer(resolve, ms);
    });
  }

  async function pump(c: ClassState): Promise<void> {
    if (c.running) return;
    c.running = true;
    try {
      while (c.queue.length > 0 && !disposed) {
        const wait = c.limiter === null ? 0 : await take(c);
        if (wait > 0) {
          await sleep(c, wait);
          continue;
        }
        // nobody left (all gave up meanwhile): the lane stays used, as if the request had gone out
        if (!c.queue.release()) break;
      }
    } finally {
      c.running = false;
    }
  }

  return {
    acquire(cls, priority, signal) {
      if (disposed) return Promise.reject(new ShopLookupError('closed', 'shop-lookup was closed.'));
      return byName(cls).queue.wait(priority, signal);
    },
    pause(cls, ms) {
      const c = byName(cls);
      c.pausedUntil = Math.max(c.pausedUntil, now() + ms);
      const ttl = Math.max(1, Math.ceil(ms));
      // NX creates it; GT only ever lengthens a pause another instance set
      void client
        .multi()
        .set(keys.pause(cls), '1', { NX: true, PX: ttl })
        .pExpire(keys.pause(cls), ttl, 'GT')
        .exec()
        .catch(() => undefined);
    },
    dispose() {
      disposed = true;
      for (const c of classes) {
        if (c.timer !== undefined) clearTimer(c.timer);
        c.wake?.();
        c.queue.rejectAll(new ShopLookupError('closed', 'shop-lookup was closed.'));
      }
    },
  };
}
