// Refusals bounded before any shop is opened (issue 33, item 5), on one real redis-server: a hub hears every request
// before it looks its shop up, so a refused client costs no lookup and no shop, whether the shop exists or not; its
// refusals are counted in one place for every shop and, through Redis, for every instance (three hubs allow ten
// guesses a minute together, not ten each), and past them even a right token is answered 429. A single-shop relay's
// instances on Redis share the count the same way.
import type { IncomingMessage } from 'node:http';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createRelayHub, createShopRelay, type RelayHub, type ShopRelay } from '../src';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { KEY, listen, SECRET } from '@shop-lookup/test-kit/relayUtils';

/** Shops the host serves: shop-000 … shop-049. */
const KNOWN = new Set(Array.from({ length: 50 }, (_, i) => `shop-${String(i).padStart(3, '0')}`));

let redis: RedisServer;
let mock: MockShopApi;
let credentialCalls: string[];
let opened: string[];
const closers: (() => Promise<void>)[] = [];

/** A request's client: the test names it (a stand-in for an address behind a trusted balancer). */
const clientId = (req: IncomingMessage) => String(req.headers['x-client'] ?? req.socket.remoteAddress);
/** A shop's till sends `Bearer till-of-<shopId>`. */
const tillAuthorize = (req: IncomingMessage, shopId: string) =>
  req.headers.authorization === `Bearer till-of-${shopId}`;

async function serve(handler: ShopRelay | RelayHub, close: () => Promise<void>): Promise<string> {
  const { server, origin } = await listen((req, res) => handler(req, res));
  closers.push(async () => {
    await close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return origin;
}

/** A hub instance on the shared Redis, its origin. */
function startHub(): Promise<string> {
  const hub = createRelayHub({
    credentials: (shopId) => {
      credentialCalls.push(shopId);
      return KNOWN.has(shopId) ? { key: KEY, secret: SECRET, target: mock.url } : null;
    },
    redis: redis.url,
    rateLimits: false,
    refreshIntervalMs: 60 * 60 * 1000,
    authorize: (req, _route, shopId) => tillAuthorize(req, shopId),
    clientId,
    observer: { shop: (e) => void (e.kind === 'open' && opened.push(e.shopId)), log: () => undefined },
  });
  return serve(hub, () => hub.close());
}

async function get(
  origin: string,
  path: string,
  client: string,
  token?: string,
): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
  const headers: Record<string, string> = {
    'x-client': client,
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const res = await fetch(`${origin}${path}`, { headers });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

/** Commands Redis ran since the last CONFIG RESETSTAT (INFO commandstats), this INFO left out. */
async function redisCommands(): Promise<number> {
  const client = createClient({ url: redis.url });
  await client.connect();
  const info = await client.info('commandstats');
  await client.close();
  const calls = [...info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].filter(
    ([, name]) => name !== 'info' && name !== 'hello' && name !== 'client',
  );
  return calls.reduce((sum, [, , n]) => sum + Number(n), 0);
}

async function resetRedis(): Promise<void> {
  const client = createClient({ url: redis.url });
  await client.connect();
  await client.flushAll();
  await client.configResetStat();
  await client.close();
}

beforeAll(async () => {
  [redis, mock] = await Promise.all([startRedisServer(), startMockShopApi({ rateLimits: false })]);
});
afterAll(async () => {
  await Promise.all([redis.stop(), mock.close()]);
});
beforeEach(async () => {
  credentialCalls = [];
  opened = [];
  await resetRedis();
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('refusals in a hub', () => {
  it("counts one client's wrong tokens over three instances as one: the 11th is 429 on any of them, a right token too", async () => {
    const origins = [await startHub(), await startHub(), await startHub()];
    for (let guess = 0; guess < 10; guess++) {
      const answer = await get(origins[guess % 3]!, '/shops/shop-001/relay/v1', 'guesser', `guess-${guess}`);
      expect(answer.status, `guess ${guess}`).toBe(403);
    }
    const eleventh = await get(origins[1]!, '/shops/shop-001/relay/v1', 'guesser', 'guess-10');
    expect(eleventh).toMatchObject({
      status: 429,
      body: { code: 'too_many_requests', refusal: { code: 'too_many_requests', route: 'discovery' } },
    });
    expect(Number(eleventh.retryAfter)).toBeGreaterThanOrEqual(1);
    // past the bound a right guess looks like a wrong one, on the instance that never refused this client too
    expect((await get(origins[2]!, '/shops/shop-001/relay/v1', 'guesser', 'till-of-shop-001')).status).toBe(429);
    // nothing was looked up for them; another client with the right token is served
    expect(credentialCalls).toEqual([]);
    expect((await get(origins[0]!, '/shops/shop-001/relay/v1', 'front-1', 'till-of-shop-001')).status).toBe(200);
    expect(credentialCalls).toEqual(['shop-001']);
  });

  it("counts a client's refusals over every shop: guesses spread over shops and unknown ids share the bound", async () => {
    const origin = await startHub();
    const shops = ['shop-001', 'shop-002', 'nope-1', 'shop-003', 'nope-2'];
    for (let guess = 0; guess < 10; guess++) {
      expect(
        (await get(origin, `/shops/${shops[guess % 5]}/v2/shop/coupons`, 'guesser', `guess-${guess}`)).status,
      ).toBe(403);
    }
    expect((await get(origin, '/shops/shop-004/v2/shop/coupons', 'guesser', 'guess-10')).status).toBe(429);
    // a client the host lets ask for an id the hub does not serve: each such answer counts as a refusal too
    for (let id = 0; id < 10; id++)
      expect((await get(origin, `/shops/nope-${id}/relay/v1`, 'prober', `till-of-nope-${id}`)).status).toBe(404);
    expect((await get(origin, '/shops/nope-10/relay/v1', 'prober', 'till-of-nope-10')).status).toBe(429);
    expect(opened).toEqual([]);
  });

  it('opens no shop, asks the host nothing and costs Redis a bounded number of commands for a flood of anonymous shop ids', async () => {
    const origins = [await startHub(), await startHub(), await startHub()];
    /** 1,000 requests, 100 at once, spread over the instances; every other id is a shop the host serves. */
    async function flood(from: number): Promise<Record<number, number>> {
      const statuses: Record<number, number> = {};
      for (let batch = 0; batch < 10; batch++) {
        const answers = await Promise.all(
          Array.from({ length: 100 }, (_, i) => {
            const n = from + batch * 100 + i;
            const shop = n % 2 === 0 ? `shop-${String(n % 50).padStart(3, '0')}` : `made-up-${n}`;
            return get(origins[n % 3]!, `/shops/${shop}/relay/v1/feed`, 'flood');
          }),
        );
        for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
      }
      return statuses;
    }
    const before = await redisCommands();
    // ten refusals a minute for the client over all three instances, then 429 without a look at anything
    expect(await flood(0)).toEqual({ 403: 10, 429: 990 });
    expect(opened).toEqual([]);
    expect(credentialCalls).toEqual([]);
    // each refusal counted in Redis is one script (EVAL: SET, INCRBY, PTTL), at most ten per instance a minute
    const first = (await redisCommands()) - before;
    expect(first).toBeLessThanOrEqual(3 * 10 * 4);
    // and once every instance has seen the client past its bound, a flood costs Redis nothing at all
    expect(await flood(1000)).toEqual({ 429: 1000 });
    expect((await redisCommands()) - before).toBe(first);
    expect(opened).toEqual([]);
    expect(credentialCalls).toEqual([]);
  });
});

describe('refusals in a single-shop relay on Redis', () => {
  it('shares one count between its instances', async () => {
    const origins: string[] = [];
    for (let i = 0; i < 3; i++) {
      const relay = createShopRelay({
        key: KEY,
        secret: SECRET,
        target: mock.url,
        shopId: 'shared-shop',
        redis: redis.url,
        rateLimits: false,
        refreshIntervalMs: 60 * 60 * 1000,
        authorize: (req) => req.headers.authorization === 'Bearer till-of-shared-shop',
        clientId,
      });
      await relay.ready;
      origins.push(await serve(relay, () => relay.close()));
    }
    for (let guess = 0; guess < 10; guess++) {
      expect((await get(origins[guess % 3]!, '/relay/v1', 'guesser', `guess-${guess}`)).status).toBe(403);
    }
    expect((await get(origins[1]!, '/relay/v1', 'guesser', 'guess-10')).status).toBe(429);
    expect((await get(origins[2]!, '/relay/v1', 'guesser', 'till-of-shared-shop')).status).toBe(429);
    expect((await get(origins[0]!, '/relay/v1', 'front-1', 'till-of-shared-shop')).status).toBe(200);
  });
});
