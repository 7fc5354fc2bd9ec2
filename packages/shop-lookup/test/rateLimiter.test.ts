import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from '@shop-lookup/shop-api';
import { lookupFor, startMock } from './utils';

describe('createRateLimiter', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  /** Start times (fake ms) of `n` requests of a class, all queued at once. */
  async function starts(limiter: ReturnType<typeof createRateLimiter>, cls: 'list' | 'other', n: number) {
    const times: number[] = [];
    const all = Array.from({ length: n }, () => limiter.acquire(cls, 'background').then(() => times.push(Date.now())));
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(all);
    return times;
  }

  it('lets list calls start at most once per second (plus a safety margin)', async () => {
    const times = await starts(createRateLimiter({ list: 1, other: 5 }, { marginMs: 50 }), 'list', 4);
    expect(times).toEqual([0, 1050, 2100, 3150]);
  });

  it('lets five other calls start per second', async () => {
    const times = await starts(createRateLimiter({ list: 1, other: 5 }, { marginMs: 50 }), 'other', 7);
    expect(times).toEqual([0, 0, 0, 0, 0, 1050, 1050]);
  });

  it('keeps the two classes apart', async () => {
    const limiter = createRateLimiter({ list: 1, other: 5 }, { marginMs: 0 });
    await limiter.acquire('list', 'background');
    const other = limiter.acquire('other', 'background').then(() => Date.now());
    await vi.advanceTimersByTimeAsync(0);
    expect(await other).toBe(0);
  });

  it('puts a lookup somebody waits for ahead of queued background work', async () => {
    const limiter = createRateLimiter({ list: 1, other: 5 }, { marginMs: 0 });
    const order: string[] = [];
    await limiter.acquire('list', 'background');
    const queued = [1, 2, 3].map((i) => limiter.acquire('list', 'background').then(() => order.push(`sync ${i}`)));
    const user = limiter.acquire('list', 'user').then(() => order.push('user'));
    await vi.advanceTimersByTimeAsync(5000);
    await Promise.all([...queued, user]);
    expect(order).toEqual(['user', 'sync 1', 'sync 2', 'sync 3']);
  });

  it('holds a class back after a throttle answer', async () => {
    const limiter = createRateLimiter({ list: 1, other: 5 }, { marginMs: 0 });
    limiter.pause('other', 3000);
    const started = limiter.acquire('other', 'user').then(() => Date.now());
    await vi.advanceTimersByTimeAsync(5000);
    expect(await started).toBe(3000);
  });

  it('lets everything through when limits are off', async () => {
    expect(await starts(createRateLimiter(false), 'list', 3)).toEqual([0, 0, 0]);
  });

  it('rejects queued requests when disposed', async () => {
    const limiter = createRateLimiter({ list: 1 });
    await limiter.acquire('list', 'background');
    const queued = limiter.acquire('list', 'background');
    limiter.dispose();
    await expect(queued).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('syncing within the real rate limits', () => {
  it('draws no throttle answer from an API that enforces 1 list call/s and 5 other calls/s', async () => {
    const mock = await startMock({ rateLimits: { list: 1, other: 5 } });
    const lookup = lookupFor(mock, { rateLimits: { list: 1, other: 5 }, products: [13801, 13805] });
    try {
      const started = Date.now();
      const report = await lookup.sync();
      expect(report.ok).toBe(true);
      expect(mock.requests.filter((r) => r.throttled)).toEqual([]);
      // 3 coupon pages and 2 option lists are 5 list calls: at least 4 s apart in all
      expect(mock.requests.filter((r) => r.path.endsWith('/options') || r.path === '/v2/shop/coupons')).toHaveLength(5);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    } finally {
      await lookup.close();
      await mock.close();
    }
  }, 15_000);
});
