// The options of createShopRelay and createShopApiProxy are checked when they are called (issue 25, item 15): a
// wrong one throws there, with the option's name and what is expected, instead of crashing the process later (a
// client that is not node-redis given as `redis` used to fail asynchronously with "client.duplicate is not a
// function").
import { createCluster } from 'redis';
import { describe, expect, it } from 'vitest';
import { createShopApiProxy, type ShopApiProxyOptions } from '../src';
import { createMemoryStore, createShopRelay, type ShopRelayOptions } from '../src';

const base = { key: 'demo-key', secret: 'demo-secret', target: 'http://127.0.0.1:9', public: true } as const;

/** What createShopRelay throws for these options (it must throw: a relay made anyway is closed). */
function relayError(options: Record<string, unknown>): { code?: string; message: string } {
  try {
    const relay = createShopRelay({ ...base, ...options } as ShopRelayOptions);
    void relay.close();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error(`createShopRelay accepted ${JSON.stringify(Object.keys(options))}`);
}

function proxyError(options: Record<string, unknown>): { code?: string; message: string } {
  try {
    createShopApiProxy({ ...base, ...options } as ShopApiProxyOptions).close();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error(`createShopApiProxy accepted ${JSON.stringify(Object.keys(options))}`);
}

describe('createShopRelay options', () => {
  it('refuses a cluster shape that is not node-redis as `redis` when it is called, naming the option and what it takes', () => {
    const error = relayError({ redis: { cluster: [{ host: '127.0.0.1', port: 7000 }] } });
    expect(error.code).toBe('bad_options');
    expect(error.message).toMatch(
      /^createShopRelay: option "redis" must be a redis:\/\/ or rediss:\/\/ URL, or a node-redis client or cluster .*ioredis.* not supported\.$/,
    );
  });

  it('takes a node-redis cluster (createCluster()) as `redis`', async () => {
    // nothing listens there: the option is taken, and the start fails in words naming the cluster
    // (packages/shop-lookup/test/redisCluster.test.ts runs a relay on a real cluster)
    const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:9' }] });
    const relay = createShopRelay({ ...base, redis: cluster });
    await expect(relay.ready).rejects.toThrow(/^Redis at redis-cluster:\/\/127\.0\.0\.1:9 is unreachable/);
    await relay.close();
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a URL that is not Redis', { redis: 'http://127.0.0.1:6379' }, /option "redis" must be a redis:\/\//],
    [
      'a store that is not a RelayStore',
      { store: { head: () => null } },
      /option "store" must be a store made by createMemoryStore\(\)/,
    ],
    [
      'a negative refresh interval',
      { refreshIntervalMs: -5 },
      /option "refreshIntervalMs" must be a whole number of milliseconds, at least 1/,
    ],
    ['products as text', { products: ['13801'] }, /option "products" must be an array of product numbers/],
    ['a page size over 100', { pageSize: 500 }, /option "pageSize" must be a whole number from 1 to 100/],
    ['a listing share over 1', { listingShare: 2 }, /option "listingShare" must be a number from 0 to 1/],
    [
      'a client bound of the wrong type',
      { clientLimits: { perSecond: 'fast' } },
      /option "clientLimits.perSecond" must be a number of requests per second > 0/,
    ],
    ['an unknown client bound', { clientLimits: { perMinute: 5 } }, /unknown option in "clientLimits": "perMinute"/],
    ['a misspelt option', { refreshIntervalMS: 1000 }, /unknown option: "refreshIntervalMS"/],
    [
      'authorize that is not a function',
      { authorize: 'till-token' },
      /option "authorize" must be a function \(req, route\)/,
    ],
    ['no secret', { secret: '' }, /option "secret" must be the shop's API secret/],
  ])('refuses %s', (_what, options, message) => {
    const error = relayError(options);
    expect(error.code).toBe('bad_options');
    expect(error.message).toMatch(/^createShopRelay: /);
    expect(error.message).toMatch(message);
  });

  it('names every wrong option at once, and never repeats a value (it could be a secret)', () => {
    const error = relayError({ key: 42, leaseMs: 10, rateLimits: 'hunter2-password' });
    expect(error.message).toContain('option "key" must be');
    expect(error.message).toContain('option "leaseMs" must be a whole number of milliseconds, at least 100');
    expect(error.message).toContain('option "rateLimits" must be false, or { list?: number > 0, other?: number > 0 }');
    expect(error.message).not.toContain('hunter2');
  });

  it('takes every documented option as it is', async () => {
    const relay = createShopRelay({
      ...base,
      basePath: '/shop-api',
      store: createMemoryStore(),
      authorize: () => true,
      refreshIntervalMs: 60_000,
      rateLimits: { list: 1, other: 5 },
      shopId: 'shop-1',
      products: [13801],
      maxTrackedProducts: 10,
      productTtlMs: 86_400_000,
      listingShare: 0.5,
      clientId: (req) => req.socket.remoteAddress ?? '',
      clientLimits: {
        concurrent: 4,
        queued: 8,
        perSecond: 10,
        burst: 20,
        maxWaitMs: 1000,
        upstreamQueued: 2,
        refusedPerMinute: 5,
      },
      timeoutMs: 5000,
      maxUrlLength: 1024,
      itemCacheMs: 0,
      maxWaitSeconds: 30,
      leaseMs: 10_000,
      retry: { retries: 1, baseDelayMs: 10, maxDelayMs: 20 },
      pageSize: 50,
      fetch: globalThis.fetch,
      now: Date.now,
      redis: undefined,
    });
    await relay.close();
  });
});

describe('createShopApiProxy options', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['no key', { key: undefined }, /option "key" must be the shop's API key/],
    [
      'a target that is not http(s)',
      { target: 'ftp://user:hunter2-password@api.example' },
      /option "target" must be an http\(s\) URL/,
    ],
    ['a basePath without its /', { basePath: 'shop-api' }, /option "basePath" must be a path starting with '\/'/],
    ['a timeout of 0', { timeoutMs: 0 }, /option "timeoutMs" must be a whole number of milliseconds, at least 1/],
    ['clientLimits: true', { clientLimits: true }, /option "clientLimits" must be false, or \{ concurrent/],
    ['a relay option', { redis: 'redis://127.0.0.1:6379' }, /unknown option: "redis"/],
  ])('refuses %s', (_what, options, message) => {
    const error = proxyError(options);
    expect(error.code).toBe('bad_options');
    expect(error.message).toMatch(/^createShopApiProxy: /);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('hunter2');
  });

  it('refuses options that are not an object', () => {
    expect(() => createShopApiProxy(undefined as unknown as ShopApiProxyOptions)).toThrow(
      /createShopApiProxy: its options must be an object/,
    );
  });
});
