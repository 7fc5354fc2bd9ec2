// The upstream rate limit shared through Redis, checked where it matters: at the mock API with its real sliding
// one-second limits (list 1/s, other 5/s). Counts and order are asserted, never durations.
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createRedisStore } from '../src/store/redis/redisStore';
import type { RelayStore } from '../src/store/relayStore';
import { createRateLimiter, type RateLimiter, type RequestClass } from '@shop-lookup/shop-api';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';

let redis: RedisServer;
let api: MockShopApi;
let shopCounter = 0;
const opened: { close(): Promise<void> | void }[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
});
// a fresh API per test: its sliding windows must not carry one test's requests into the next
beforeEach(async () => {
  api = await startMockShopApi({ rateLimits: { list: 1, other: 5 }, requireAuth: false });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close()));
  await api.close();
});
afterAll(() => redis?.stop());

/**
 * `count` instances (each its own store, so its own connections) of one shop on the same Redis. Their lanes are held
 * 600 ms past each second (the default is 200): these tests are about instances sharing one limit, and the test
 * command's two lanes on 2 cores have delayed a granted request's arrival at the API by more than 200 ms, so that
 * the next one, granted a second later, arrived less than a second after it.
 */
async function instances(count: number): Promise<RelayStore[]> {
  const shopId = `limits-${++shopCounter}`;
  const stores = await Promise.all(
    Array.from({ length: count }, () => createRedisStore({ redis: redis.url, shopId, rateLimitMarginMs: 600 })),
  );
  opened.push(...stores);
  return stores;
}

const PATHS: Record<RequestClass, string> = { list: '/v2/shop/coupons', other: '/v2/shop/coupons/WELCOME10' };

/** Each limiter lets `each` requests of `cls` through to the mock API, all queued at once. */
async function drive(limiters: RateLimiter[], cls: RequestClass, each: number): Promise<void> {
  await Promise.all(
    limiters.flatMap((limiter) =>
      Array.from({ length: each }, async () => {
        await limiter.acquire(cls, 'background');
        await (await fetch(`${api.url}${PATHS[cls]}`)).arrayBuffer();
      }),
    ),
  );
}

const throttled = (): number => api.requests.filter((r) => r.throttled).length;

describe('redisRateLimiter', () => {
  it('keeps two instances together within 1 list call per second: the API counts no 429', async () => {
    const limiters = (await instances(2)).map((store) => store.rateLimiter({ list: 1, other: 5 }));
    await drive(limiters, 'list', 2);
    expect(api.requests).toHaveLength(4);
    expect(throttled()).toBe(0);
  });

  it('is what two instances need: one local limiter each draws 429s from the same API', async () => {
    const limiters = [createRateLimiter({ list: 1, other: 5 }), createRateLimiter({ list: 1, other: 5 })];
    opened.push({ close: () => void limiters.map((l) => l.dispose()) });
    await drive(limiters, 'list', 1);
    expect(api.requests).toHaveLength(2);
    expect(throttled()).toBe(1);
  });

  it('keeps two instances together within 5 other calls per second', async () => {
    const limiters = (await instances(2)).map((store) => store.rateLimiter({ list: 1, other: 5 }));
    await drive(limiters, 'other', 6);
    expect(api.requests).toHaveLength(12);
    expect(throttled()).toBe(0);
  });

  it('holds every instance after one of them paused a class (a 429 with Retry-After)', async () => {
    const [a, b] = await instances(2);
    const pausing = a!.rateLimiter({ list: 1, other: 5 });
    const waiting = b!.rateLimiter({ list: 1, other: 5 });
    pausing.pause('other', 800);
    const client = createClient({ url: redis.url });
    await client.connect();
    opened.push({ close: () => client.destroy() });
    const pauseKey = `shop-lookup:{limits-${shopCounter}}:ratelimit:other:pause`;
    // the pause reaches Redis asynchronously; the other instance asks only once it is there
    while ((await client.exists(pauseKey)) === 0) await new Promise((resolve) => setTimeout(resolve, 5));

    await waiting.acquire('other', 'user');
    expect(await client.exists(pauseKey)).toBe(0);
  });

  it('holds the next call one window when Redis lost its data (it forgot the last second): the API counts no 429', async () => {
    const [a, b] = await instances(2);
    const first = a!.rateLimiter({ list: 1, other: 5 });
    const next = b!.rateLimiter({ list: 1, other: 5 });
    await drive([first], 'list', 1);
    const client = createClient({ url: redis.url });
    await client.connect();
    opened.push({ close: () => client.destroy() });
    await client.flushAll(); // Redis restarted without its data, right after a listing's last page
    await b!.head(); // the instance that finds the history gone and is about to list the shop again
    await drive([next], 'list', 1);
    expect(api.requests).toHaveLength(2);
    expect(throttled()).toBe(0);
  });

  it('lets a user request go ahead of queued background work, and rejects the queue when disposed', async () => {
    const [store] = await instances(1);
    const limiter = store!.rateLimiter({ list: 1, other: 5 });
    await limiter.acquire('list', 'background'); // takes the one lane of this second
    const order: string[] = [];
    const background = limiter.acquire('list', 'background').then(
      () => order.push('background'),
      (e: { code: string }) => order.push(`background ${e.code}`),
    );
    const user = limiter.acquire('list', 'user').then(() => {
      order.push('user');
      limiter.dispose();
    });
    await Promise.all([background, user]);
    expect(order).toEqual(['user', 'background closed']);
  });
});
