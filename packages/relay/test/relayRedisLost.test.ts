// Redis back without its data (restarted without persistence): two relay instances of one shop on a real
// redis-server, with a refresh interval far longer than the test, find a new feed history in it once it is back and
// list what it lost at once (one listing between them), not at the next refresh tick. Tills meanwhile get what the
// feed protocol says (503 relay_not_ready, 409 must_refetch for the old history), never an empty snapshot.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createShopRelay, type ShopRelay } from '../src';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { listen, type Json } from '@shop-lookup/test-kit/relayUtils';
import type { Server } from 'node:http';

const COUPONS = 40;
let redis: RedisServer;
let api: MockShopApi;
const open: { relay: ShopRelay; server: Server }[] = [];

beforeAll(async () => {
  redis = await startRedisServer(); // without persistence: a restart loses everything
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  for (const { relay, server } of open.splice(0)) {
    await relay.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  await api?.close();
});

interface Answer {
  status: number;
  body: Json;
}

/** A relay instance of `shopId` on the test's Redis, served on loopback; its GET of a feed path. */
async function instance(shopId: string): Promise<{ relay: ShopRelay; feed: (query: string) => Promise<Answer> }> {
  const relay = createShopRelay({
    key: 'demo-key',
    secret: 'demo-secret',
    target: api.url,
    redis: redis.url,
    shopId,
    public: true,
    rateLimits: false,
    refreshIntervalMs: 3_600_000, // an hour: the test never waits for a tick
    retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
  });
  const { server, origin } = await listen((req, res) => relay(req, res));
  open.push({ relay, server });
  const feed = async (query: string): Promise<Answer> => {
    const res = await fetch(`${origin}/relay/v1/feed?${query}`);
    return { status: res.status, body: (await res.json()) as Json };
  };
  return { relay, feed };
}

const couponPages = () => api.requests.filter((r) => r.path === '/v2/shop/coupons').length;

describe('a relay whose Redis came back without its data', () => {
  it('lists what it lost as soon as Redis is back (one listing for both instances), tills told to start again', async () => {
    api = await startMockShopApi({ rateLimits: false, data: { coupons: COUPONS } });
    const shop = `redis-lost-${process.pid}`;
    const a = await instance(shop);
    const b = await instance(shop);
    await a.relay.ready;
    await b.relay.ready;
    await a.relay.refresh();
    await expect.poll(async () => (await b.feed('limit=1000')).body.upserts?.length).toBe(COUPONS);
    const before = (await b.feed('limit=1000')).body;
    const pagesBefore = couponPages();

    await redis.stop();
    await redis.start(); // empty: the server keeps nothing

    // what a till sees meanwhile, on either instance: the data as before, or the protocol's answers
    const seen: Answer[] = [];
    const look = async (): Promise<boolean> => {
      const answers = await Promise.all(
        [a, b].flatMap((r) => [r.feed('limit=1000'), r.feed(`since=${before.version}&handle=${before.handle}`)]),
      );
      seen.push(...answers);
      const snapshots = [answers[0]!, answers[2]!];
      return snapshots.every(
        (s) => s.status === 200 && s.body.handle !== before.handle && s.body.upserts.length === COUPONS,
      );
    };
    await expect.poll(look, { timeout: 30_000, interval: 50 }).toBe(true);

    // listed once, by one instance: the lost history's one page again
    expect(couponPages() - pagesBefore).toBe(1);
    for (const answer of seen) {
      const fine =
        (answer.status === 200 && (answer.body.handle === before.handle || answer.body.upserts.length === COUPONS)) ||
        (answer.status === 503 && ['relay_not_ready', 'relay_unavailable'].includes(answer.body.code)) ||
        (answer.status === 409 && answer.body.code === 'must_refetch');
      expect(
        fine,
        JSON.stringify({
          status: answer.status,
          code: answer.body.code,
          handle: answer.body.handle,
          n: answer.body.upserts?.length,
        }),
      ).toBe(true);
    }
    // a till still on the old history is told to start again, then reads the new snapshot
    for (const r of [a, b])
      expect((await r.feed(`since=${before.version}&handle=${before.handle}`)).body).toMatchObject({
        code: 'must_refetch',
      });
  }, 60_000);
});
