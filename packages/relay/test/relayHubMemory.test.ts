// The hub's memory budget (issue 20, item 3): shops whose records are not held in memory are served straight from
// Redis (snapshot chunks read in key order, lists, changes from the log), answer for answer as a shop held in memory;
// `maxHotRecords` bounds the records held over every shop, the least recently used letting theirs go. On one
// redis-server and on a three-master Redis Cluster (the shops' stores share the hub's connections there too).
import { createClient, createCluster } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createRelayHub, type RelayHub, type RelayHubOptions } from '../src';
import { startRedisCluster, type RedisClusterServers } from '@shop-lookup/test-kit/redisCluster';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { listen, type Json } from '@shop-lookup/test-kit/relayUtils';

const SHOPS = ['shop-a', 'shop-b', 'shop-c'] as const;
const COUPONS = 20; // and one coupon of the shop's own: 21 records a shop
const PRODUCT = MOCK_CODES.firstProductNo;

interface Hub {
  hub: RelayHub;
  origin: string;
  close(): Promise<void>;
}
interface Answer {
  status: number;
  etag: string | null;
  body: Json | null;
}

let mocks: Record<string, MockShopApi>;
const hubs: Hub[] = [];
const clients: { isOpen: boolean; close(): Promise<void>; destroy(): void }[] = [];

async function startHub(redis: RelayHubOptions['redis'], options: Partial<RelayHubOptions> = {}): Promise<Hub> {
  const hub = createRelayHub({
    credentials: (shopId) =>
      mocks[shopId] ? { key: `key-${shopId}`, secret: `secret-${shopId}-4c1d`, target: mocks[shopId]!.url } : null,
    redis,
    public: true,
    rateLimits: false,
    retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
    refreshIntervalMs: 60 * 60 * 1000,
    observer: { log: () => undefined },
    ...options,
  });
  const server = await listen((req, res) => hub(req, res));
  const entry: Hub = {
    hub,
    origin: server.origin,
    async close() {
      await hub.close();
      server.server.closeAllConnections();
      await new Promise<void>((resolve) => server.server.close(() => resolve()));
    },
  };
  hubs.push(entry);
  return entry;
}

async function get(hub: Hub, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${hub.origin}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, etag: res.headers.get('etag'), body: text === '' ? null : (JSON.parse(text) as Json) };
}

/** Every page of a shop's snapshot (7 records a page), as a till reads it. */
async function snapshotPages(hub: Hub, shop: string): Promise<Answer[]> {
  const pages = [await get(hub, `/shops/${shop}/relay/v1/feed?limit=10`)];
  while (pages.at(-1)!.body?.cursor) {
    const { cursor, handle } = pages.at(-1)!.body!;
    pages.push(await get(hub, `/shops/${shop}/relay/v1/feed?cursor=${cursor}&handle=${handle}&limit=10`));
  }
  return pages;
}

/**
 * What a changes answer says of the data. A refresh commits each resource on its own, and the other instance hears
 * of each through pub/sub: for a moment the two may differ in a resource's confirmedAt (and so the ETag) only.
 */
const dataOf = ({ status, body }: Answer) => ({
  status,
  version: body?.version,
  handle: body?.handle,
  upserts: body?.upserts,
  deletes: body?.deletes,
});

const codesOf = (pages: Answer[]): string[] =>
  pages.flatMap((p) => (p.body!.upserts as Json[]).map((u) => `${u.resource}/${u.key}`));

beforeEach(async () => {
  const started = await Promise.all(
    SHOPS.map((shop, i) =>
      startMockShopApi({
        rateLimits: false,
        key: `key-${shop}`,
        secret: `secret-${shop}-4c1d`,
        data: { seed: i + 1, coupons: COUPONS, products: 3 },
      }),
    ),
  );
  mocks = Object.fromEntries(SHOPS.map((shop, i) => [shop, started[i]!]));
  for (const shop of SHOPS)
    mocks[shop]!.upsertCoupon({ ...mocks[shop]!.data.coupons[1], coupon_code: `ONLY-${shop}`, name: `only ${shop}` });
});
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
  for (const mock of Object.values(mocks)) await mock.close();
});
afterAll(async () => {
  // the cluster is stopped by then (its describe's afterAll runs first): close() would wait for replies that never come
  for (const client of clients) if (client.isOpen) client.destroy();
});

/** The tests, on one kind of Redis. */
function budgetTests(redisOf: () => RelayHubOptions['redis'], flush: () => Promise<void>): void {
  beforeEach(flush);

  it('serves a shop not held in memory from Redis answer for answer as one held: snapshot pages, lists, since, 304, live', async () => {
    const held = await startHub(redisOf());
    const cold = await startHub(redisOf(), { maxHotRecords: 0 }); // no shop fits: every one is read from Redis
    // a tracked product, so the snapshot spans two resources (coupons, then options:<no>)
    const posted = await fetch(`${held.origin}/shops/shop-a/relay/v1/products`, {
      method: 'POST',
      body: JSON.stringify({ products: [PRODUCT] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(posted.status).toBe(202); // accepted: listed by the refresh below
    await held.hub.refresh('shop-a');

    const fromMemory = await snapshotPages(held, 'shop-a');
    await expect.poll(() => held.hub.status().inMemory).toEqual(['shop-a']);
    const again = await snapshotPages(held, 'shop-a'); // now from the records in memory
    const fromRedis = await snapshotPages(cold, 'shop-a');
    expect(fromMemory.length).toBeGreaterThan(2);
    expect(codesOf(fromMemory)).toContain('coupons/ONLY-shop-a');
    expect(codesOf(fromMemory).filter((c) => c.startsWith(`options:${PRODUCT}/`)).length).toBeGreaterThan(0);
    expect(again).toEqual(fromMemory);
    expect(fromRedis).toEqual(fromMemory); // every page: records, cursors, versions, ETags
    const list = '/shops/shop-a/v2/shop/coupons?offset=2&limit=10';
    expect(await get(cold, list)).toEqual(await get(held, list));
    expect(cold.hub.status()).toMatchObject({ inMemory: [], hotRecords: 0, hot: ['shop-a'] });

    // a change: the same changes since the snapshot's version from both
    const { version, handle } = fromMemory[0]!.body!;
    mocks['shop-a']!.upsertCoupon({ ...mocks['shop-a']!.data.coupons[2], coupon_code: 'NEW-shop-a' });
    mocks['shop-a']!.removeCoupon(String(mocks['shop-a']!.data.coupons[3]!.coupon_code));
    await held.hub.refresh('shop-a');
    const since = `/shops/shop-a/relay/v1/feed?since=${version}&handle=${handle}`;
    // the other instance hears of the refresh's commits through Redis' pub/sub: the same answer once it has
    await expect.poll(async () => JSON.stringify(await get(cold, since))).toBe(JSON.stringify(await get(held, since)));
    const changes = await get(cold, since);
    expect(changes.body!.upserts.map((u: Json) => u.key)).toContain('NEW-shop-a');
    expect(changes.body!.deletes).toHaveLength(1);

    // 304 with the ETag of the head, from both
    const head = `/shops/shop-a/relay/v1/feed?since=${changes.body!.version}&handle=${handle}`;
    expect((await get(cold, head, { 'if-none-match': changes.etag! })).status).toBe(304);
    expect((await get(held, head, { 'if-none-match': changes.etag! })).status).toBe(304);

    // live: a long-poll on each, answered by the next commit with the same change
    const waiting = [get(cold, `${head}&wait=30`), get(held, `${head}&wait=30`)];
    mocks['shop-a']!.upsertCoupon({ ...mocks['shop-a']!.data.coupons[4], coupon_code: 'LIVE-shop-a' });
    await held.hub.refresh('shop-a');
    const [coldLive, heldLive] = await Promise.all(waiting);
    expect(coldLive!.body!.upserts.map((u: Json) => u.key)).toEqual(['LIVE-shop-a']);
    expect(dataOf(coldLive!)).toEqual(dataOf(heldLive!));

    // a new snapshot after the changes: equal again, and the memory copy followed the changes
    const after = await snapshotPages(cold, 'shop-a');
    expect(codesOf(after)).toContain('coupons/LIVE-shop-a');
    // every page alike once the other instance heard of both commits (its confirmedAt too)
    await expect
      .poll(async () => JSON.stringify(await snapshotPages(cold, 'shop-a')))
      .toBe(JSON.stringify(await snapshotPages(held, 'shop-a')));
    expect(cold.hub.status().hotRecords).toBe(0);
  });

  it('holds at most maxHotRecords records, the least recently used shop letting its records go', async () => {
    const lister = await startHub(redisOf());
    for (const shop of SHOPS) await lister.hub.refresh(shop);
    const budget = 2 * (COUPONS + 1) + 5; // two shops' records fit, not three
    const hub = await startHub(redisOf(), { maxHotRecords: budget });
    const first: Record<string, Answer[]> = {};
    for (const shop of SHOPS) {
      first[shop] = await snapshotPages(hub, shop); // read from Redis, then held
      await expect.poll(() => hub.hub.status().inMemory).toContain(shop);
      expect(hub.hub.status().hotRecords).toBeLessThanOrEqual(budget);
    }
    expect(hub.hub.status()).toMatchObject({ inMemory: ['shop-b', 'shop-c'], hotRecords: 2 * (COUPONS + 1) });
    // shop-c used last but one now: reading shop-a again holds it and lets shop-b (least recently used) go
    expect(await snapshotPages(hub, 'shop-c')).toEqual(first['shop-c']);
    expect(await snapshotPages(hub, 'shop-a')).toEqual(first['shop-a']); // from Redis: equal
    await expect.poll(() => hub.hub.status().inMemory).toEqual(['shop-c', 'shop-a']);
    expect(hub.hub.status().hotRecords).toBe(2 * (COUPONS + 1));
    expect(await snapshotPages(hub, 'shop-b')).toEqual(first['shop-b']);
    for (const shop of SHOPS) expect(codesOf(first[shop]!)).toContain(`coupons/ONLY-${shop}`);
  });
}

describe('createRelayHub maxHotRecords, on one redis-server', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer({ persistent: true }); // (one test stops it and starts it again with its data)
  });
  afterAll(async () => {
    await redis.stop();
  });
  it("answers a shop not in memory 503 in words while Redis is away (its snapshot is Redis'), and serves it once Redis is back", async () => {
    const hub = await startHub(redis.url, { maxHotRecords: 0 });
    await hub.hub.refresh('shop-a');
    const before = await snapshotPages(hub, 'shop-a');
    await redis.stop();
    try {
      const away = await get(hub, '/shops/shop-a/relay/v1/feed?limit=7');
      expect(away.status).toBe(503);
      expect(away.body).toMatchObject({
        code: 'relay_unavailable',
        message: expect.stringMatching(
          /^RELAY UNAVAILABLE: the relay store could not be read: .*Keep using local data/,
        ),
      });
      const list = await get(hub, '/shops/shop-a/v2/shop/coupons');
      expect(list.status).toBe(503);
      expect(JSON.stringify(list.body)).toMatch(/RELAY UNAVAILABLE: the relay store could not be read/);
    } finally {
      await redis.start();
    }
    // answered again (200), then no longer degraded once the store's health has caught up: the same pages as before
    await expect.poll(async () => JSON.stringify(await snapshotPages(hub, 'shop-a'))).toBe(JSON.stringify(before));

    // back without its data (a Redis whose disk was lost): never the empty store's records under the old history;
    // 503 (a new history, not listed yet) until the shop is listed again, at once, not at the next refresh (an hour)
    await redis.stop();
    await redis.start({ empty: true });
    const seen: Answer[] = [];
    await expect
      .poll(
        async () => {
          seen.push(await get(hub, '/shops/shop-a/relay/v1/feed?limit=7'));
          return seen.at(-1)!.status === 200;
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    for (const answer of seen.slice(0, -1)) expect(answer.status, JSON.stringify(answer.body)).toBe(503);
    const again = await snapshotPages(hub, 'shop-a');
    expect(again[0]!.body!.handle).not.toBe(before[0]!.body!.handle);
    expect(codesOf(again)).toEqual(codesOf(before));
  });

  budgetTests(
    () => redis.url,
    async () => {
      const client = createClient({ url: redis.url });
      await client.connect();
      await client.flushAll();
      await client.close();
    },
  );
});

describe('createRelayHub maxHotRecords, on a Redis Cluster', () => {
  let cluster: RedisClusterServers;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 30_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const clusterClient = () => {
    const client = createCluster({ rootNodes: cluster.urls.map((url) => ({ url })) });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  budgetTests(clusterClient, async () => {
    const client = clusterClient();
    await client.connect();
    for (const master of client.masters) await (await client.nodeClient(master)).flushAll();
  });
});
