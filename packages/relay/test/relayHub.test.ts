// The relay hub (issue 20, item 1): many shops under one mount on one real redis-server, each shop named by the path,
// its credentials from the host's function (cached; added, rotated and removed at runtime), its till tokens checked
// per shop, its keys, token and lease its own; at most maxHotShops hot, the least recently asked closed and served
// again from Redis without listing the API again.
import { createClient } from 'redis';
import type { IncomingMessage } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import {
  createMemoryStore,
  createRelayHub,
  createShopRelay,
  type RelayHub,
  type RelayHubOptions,
  type RelayStore,
  type ShopCredentials,
  type ShopRelay,
} from '../src';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { listen, type Json } from '@shop-lookup/test-kit/relayUtils';

const SHOPS = ['shop-a', 'shop-b', 'shop-c'] as const;
type ShopName = (typeof SHOPS)[number];
const TILL_TOKENS: Record<ShopName, string> = {
  'shop-a': 'till-of-a-1f3c',
  'shop-b': 'till-of-b-9e2d',
  'shop-c': 'till-of-c-77aa',
};
const LIST = '/v2/shop/coupons';

let redis: RedisServer;
let mocks: Record<ShopName, MockShopApi>;
/** What the host's database says: shop → credentials (changed by the tests). */
let registry: Map<string, ShopCredentials>;
let credentialCalls: string[];
let clock: { offset: number };
let hub: RelayHub;
let origin: string;
let closeServer: () => Promise<void>;
let events: { shopId: string; kind: string }[];

function credentialsOf(shop: ShopName, mock: MockShopApi): ShopCredentials {
  return { key: `key-${shop}`, secret: `secret-${shop}-0d9e`, target: mock.url };
}

async function startHub(options: Partial<RelayHubOptions> = {}): Promise<void> {
  hub = createRelayHub({
    credentials: (shopId) => {
      credentialCalls.push(shopId);
      return registry.get(shopId) ?? null;
    },
    credentialsTtlMs: 60_000,
    redis: redis.url,
    rateLimits: false,
    retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
    refreshIntervalMs: 60 * 60 * 1000,
    now: () => Date.now() + clock.offset,
    // a shop the host does not serve has a till token too (`till-of-<id>`): its till learns that it is unknown
    authorize: (req: IncomingMessage, _route, shopId) =>
      req.headers['x-till'] !== undefined &&
      req.headers['x-till'] === (TILL_TOKENS[shopId as ShopName] ?? `till-of-${shopId}`),
    observer: { shop: (e) => events.push(e), log: () => undefined },
    ...options,
  });
  const server = await listen((req, res) => hub(req, res));
  origin = server.origin;
  closeServer = async () => {
    server.server.closeAllConnections();
    await new Promise<void>((resolve) => server.server.close(() => resolve()));
  };
}

async function get(path: string, till?: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${origin}${path}`, till ? { headers: { 'x-till': till } } : {});
  return { status: res.status, body: (await res.json()) as Json };
}

/** A shop's whole snapshot through the hub, as its till reads it: every record, and the feed's handle and version. */
async function snapshotOf(
  shop: ShopName,
): Promise<{ codes: string[]; handle: string; version: number; shops: Set<string> }> {
  const codes: string[] = [];
  const shops = new Set<string>();
  let answer = await get(`/shops/${shop}/relay/v1/feed?limit=7`, TILL_TOKENS[shop]);
  expect(answer.status).toBe(200);
  const { handle, version } = answer.body;
  for (;;) {
    shops.add(answer.body.shop);
    for (const u of answer.body.upserts) codes.push(String(u.record.coupon_code));
    if (answer.body.cursor === null) break;
    answer = await get(
      `/shops/${shop}/relay/v1/feed?cursor=${answer.body.cursor}&handle=${handle}&limit=7`,
      TILL_TOKENS[shop],
    );
  }
  return { codes, handle, version, shops };
}

const listCalls = (mock: MockShopApi): number => mock.requests.filter((r) => r.path === LIST).length;

beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis.stop();
});

beforeEach(async () => {
  const started = await Promise.all(
    SHOPS.map((shop, i) =>
      startMockShopApi({
        rateLimits: false,
        key: `key-${shop}`,
        secret: `secret-${shop}-0d9e`,
        data: { seed: i + 1, coupons: 20 },
      }),
    ),
  );
  mocks = Object.fromEntries(SHOPS.map((shop, i) => [shop, started[i]!])) as Record<ShopName, MockShopApi>;
  // a coupon only this shop has: no other shop's feed may ever hold it
  for (const shop of SHOPS)
    mocks[shop].upsertCoupon({ ...mocks[shop].data.coupons[1], coupon_code: `ONLY-${shop}`, name: `only ${shop}` });
  registry = new Map(SHOPS.map((shop) => [shop, credentialsOf(shop, mocks[shop])]));
  credentialCalls = [];
  events = [];
  clock = { offset: 0 };
  const flush = createClient({ url: redis.url });
  await flush.connect();
  await flush.flushAll();
  await flush.close();
});
afterEach(async () => {
  await hub?.close();
  await closeServer?.();
  for (const mock of Object.values(mocks)) await mock.close();
});

describe('createRelayHub', () => {
  it("serves each shop its own records under /shops/{shopId}, never another shop's", async () => {
    await startHub();
    for (const shop of SHOPS) await hub.refresh(shop);
    for (const shop of SHOPS) {
      const snap = await snapshotOf(shop);
      expect(snap.shops).toEqual(new Set([shop]));
      expect(snap.codes).toContain(`ONLY-${shop}`);
      for (const other of SHOPS.filter((s) => s !== shop)) expect(snap.codes).not.toContain(`ONLY-${other}`);
      const own = new Set(mocks[shop].data.coupons.map((c) => String(c.coupon_code)));
      for (const code of snap.codes) expect(own.has(code), `${shop} serves ${code}`).toBe(true);
      // the API paths too: the list from the snapshot, under the shop's path
      const list = await get(`/shops/${shop}/v2/shop/coupons?limit=100`, TILL_TOKENS[shop]);
      expect(list.status).toBe(200);
      const listed = (list.body.data.list as Json[]).map((c) => String(c.coupon_code));
      expect(listed).toContain(`ONLY-${shop}`);
      for (const other of SHOPS.filter((s) => s !== shop)) expect(listed).not.toContain(`ONLY-${other}`);
    }
    // each shop has its own keys, token and lease in Redis: all under its hash tag
    const reader = createClient({ url: redis.url });
    await reader.connect();
    try {
      const keys: string[] = [];
      for await (const batch of reader.scanIterator({ MATCH: '*', COUNT: 1000 })) keys.push(...batch);
      for (const key of keys) expect(key).toMatch(/^shop-lookup:\{shop-[abc]\}:/);
      const tokens = await Promise.all(SHOPS.map((shop) => reader.get(`shop-lookup:{${shop}}:token`)));
      expect(new Set(tokens).size).toBe(3);
      expect(tokens.every((t) => typeof t === 'string' && t.length > 0)).toBe(true);
      for (const shop of SHOPS)
        expect(Number(await reader.get(`shop-lookup:{${shop}}:lease:sync:fence`))).toBeGreaterThan(0);
    } finally {
      await reader.close();
    }
  });

  it("keeps each shop's issued-coupon uses apart: its own feed, its own Redis hash, kept when the shop is opened again", async () => {
    await startHub({ maxHotShops: 1 });
    const send = (shop: ShopName, code: string) =>
      fetch(`${origin}/shops/${shop}/relay/v1/uses`, {
        method: 'POST',
        headers: { 'x-till': TILL_TOKENS[shop], 'content-type': 'application/json' },
        body: JSON.stringify({
          device: `dev-${shop}`,
          uses: [{ entry: `e-${code}`, code, couponCode: null, orderId: null, at: 1, override: false }],
        }),
      });
    expect((await send('shop-a', 'IC-ONLY-A')).status).toBe(200);
    expect((await send('shop-b', 'IC-ONLY-B')).status).toBe(200);
    // shop-a's till may not send to shop-b
    const wrong = await fetch(`${origin}/shops/shop-b/relay/v1/uses`, {
      method: 'POST',
      headers: { 'x-till': TILL_TOKENS['shop-a'], 'content-type': 'application/json' },
      body: '{}',
    });
    expect(wrong.status).toBe(403);
    for (const shop of ['shop-a', 'shop-b'] as const) {
      await hub.refresh(shop); // (opened again: maxHotShops 1 closed it meanwhile)
      const answer = await get(`/shops/${shop}/relay/v1/feed?limit=1000`, TILL_TOKENS[shop]);
      const uses = (answer.body.upserts as Json[]).filter((u) => u.resource === 'uses').map((u) => u.key);
      expect(uses).toEqual([shop === 'shop-a' ? 'IC-ONLY-A' : 'IC-ONLY-B']);
    }
    const reader = createClient({ url: redis.url });
    await reader.connect();
    try {
      expect(await reader.hKeys('shop-lookup:{shop-a}:snapshot:uses:records')).toEqual(['IC-ONLY-A']);
      expect(await reader.hKeys('shop-lookup:{shop-b}:snapshot:uses:records')).toEqual(['IC-ONLY-B']);
    } finally {
      await reader.close();
    }
  });

  it("never opens one shop to another shop's till token, answers a refused unknown shop like a refused known one, and unknown and malformed shops 404", async () => {
    await startHub({ clientLimits: { refusedPerMinute: 100 } }); // this test refuses one address more than 10 times
    await hub.refresh('shop-a');
    expect((await get('/shops/shop-a/relay/v1', TILL_TOKENS['shop-a'])).status).toBe(200);
    for (const path of ['/shops/shop-a/relay/v1', '/shops/shop-a/relay/v1/feed', '/shops/shop-a/v2/shop/coupons']) {
      const other = await get(path, TILL_TOKENS['shop-b']);
      expect(other.status, path).toBe(403);
      expect(JSON.stringify(other.body)).not.toContain('ONLY-shop-a');
      expect((await get(path)).status, path).toBe(403);
      // and the other way round: shop-a's till on shop-b's paths
      const reverse = await get(path.replace('shop-a', 'shop-b'), TILL_TOKENS['shop-a']);
      expect(reverse.status, path).toBe(403);
    }
    // refused before the shop is looked up: a shop that exists and one that does not answer alike
    const refusedKnown = await get('/shops/shop-c/relay/v1', TILL_TOKENS['shop-a']);
    const refusedUnknown = await get('/shops/shop-zz/relay/v1', TILL_TOKENS['shop-a']);
    expect(refusedKnown.status).toBe(403);
    expect(refusedUnknown).toEqual(refusedKnown);
    // a client the host lets ask for that id learns that the hub serves no such shop
    const unknown = await get('/shops/shop-zz/relay/v1', 'till-of-shop-zz');
    expect(unknown).toEqual({
      status: 404,
      body: { code: 'unknown_shop', message: 'NO SUCH SHOP: this hub serves no shop "shop-zz".' },
    });
    for (const path of [
      '/shops/shop%2Fa/relay/v1',
      '/shops/{shop-a}/relay/v1',
      '/shops/../relay/v1',
      '/shops//relay/v1',
    ]) {
      const bad = await get(path, TILL_TOKENS['shop-a']);
      expect(bad.status, path).toBe(404);
      expect(bad.body.code, path).toBe('not_found');
    }
    // the host's function was asked once per shop a client may ask (cached), once for the unknown one (remembered),
    // never for a shop only refused clients asked for, never for a bad id
    expect((await get('/shops/shop-zz/relay/v1', 'till-of-shop-zz')).status).toBe(404);
    expect(credentialCalls.sort()).toEqual(['shop-a', 'shop-zz']);
  });

  it('sees a shop added, rotated and removed in the host function without a restart', async () => {
    registry.delete('shop-c');
    await startHub({ credentialsTtlMs: 1_000 });
    expect((await get('/shops/shop-c/relay/v1', TILL_TOKENS['shop-c'])).status).toBe(404);
    // added: seen once the unknown answer is older than the TTL
    registry.set('shop-c', credentialsOf('shop-c', mocks['shop-c']));
    expect((await get('/shops/shop-c/relay/v1', TILL_TOKENS['shop-c'])).status).toBe(404);
    clock.offset += 1_000;
    expect((await get('/shops/shop-c/relay/v1', TILL_TOKENS['shop-c'])).status).toBe(200);

    // rotated: shop-a moves to a new key (and an API holding other data); the old key is refused from then on
    await hub.refresh('shop-a');
    const rotated = await startMockShopApi({
      rateLimits: false,
      key: 'key-shop-a-2',
      secret: 'secret-shop-a-2-5b1c',
      data: { seed: 9, coupons: 20 },
    });
    try {
      rotated.upsertCoupon({ ...rotated.data.coupons[1], coupon_code: 'ONLY-shop-a-rotated' });
      registry.set('shop-a', { key: 'key-shop-a-2', secret: 'secret-shop-a-2-5b1c', target: rotated.url });
      expect((await snapshotOf('shop-a')).codes).toContain('ONLY-shop-a'); // within the TTL: the old relay
      clock.offset += 1_000;
      await hub.refresh('shop-a');
      expect(events).toContainEqual({ shopId: 'shop-a', kind: 'rotate' });
      const after = await snapshotOf('shop-a');
      expect(after.codes).toContain('ONLY-shop-a-rotated');
      expect(after.codes).not.toContain('ONLY-shop-a');
      expect(rotated.requests.some((r) => r.path === LIST)).toBe(true);

      // removed: 404 once the TTL ran out, and closed here
      registry.delete('shop-a');
      clock.offset += 1_000;
      expect((await get('/shops/shop-a/relay/v1', TILL_TOKENS['shop-a'])).status).toBe(404);
      expect(hub.status().hot).not.toContain('shop-a');
      expect(events).toContainEqual({ shopId: 'shop-a', kind: 'close' });
    } finally {
      await rotated.close();
    }
  });

  it("keeps a hot shop serving while the host's credentials cannot be read, and answers a cold one 503 in words", async () => {
    let failing = false;
    await startHub({
      credentialsTtlMs: 1_000,
      credentials: (shopId) => {
        if (failing) throw new Error('the shops database is down');
        return registry.get(shopId) ?? null;
      },
    });
    await hub.refresh('shop-a');
    failing = true;
    clock.offset += 1_000;
    expect((await get('/shops/shop-a/relay/v1', TILL_TOKENS['shop-a'])).status).toBe(200);
    expect(hub.status().hot).toContain('shop-a');
    const cold = await get('/shops/shop-b/relay/v1', TILL_TOKENS['shop-b']);
    expect(cold).toEqual({
      status: 503,
      body: {
        code: 'shop_unavailable',
        message: 'SHOP UNAVAILABLE: this shop could not be opened now (see the server log); try again later.',
      },
    });
  });

  it('keeps at most maxHotShops hot, and serves an evicted shop again from Redis without listing the API', async () => {
    await startHub({ maxHotShops: 2 });
    await hub.refresh('shop-a');
    const before = await snapshotOf('shop-a');
    const listedA = listCalls(mocks['shop-a']);
    await hub.refresh('shop-b');
    await hub.refresh('shop-c');
    expect(hub.status().hot).toEqual(['shop-b', 'shop-c']);
    expect(events).toContainEqual({ shopId: 'shop-a', kind: 'close' });

    // cold: made hot again from what Redis holds, the same feed (handle, version, records), the API not asked
    const again = await snapshotOf('shop-a');
    expect(again).toEqual(before);
    expect(listCalls(mocks['shop-a'])).toBe(listedA);
    expect(hub.status().hot).toEqual(['shop-c', 'shop-a']);
  });

  it('lists every shop the host names once over two instances, and takes over a shop whose lister died', async () => {
    // a lister that died mid-listing of shop-c: its lease (as the Redis store writes it) runs out 600 ms later by the
    // hubs' clock, which stands still until the test moves it (a slow sweep cannot outlast the lease by accident)
    let clockAt = Date.now();
    const now = () => clockAt;
    const writer = createClient({ url: redis.url });
    await writer.connect();
    const deadUntil = clockAt + 600;
    await writer.set(
      'shop-lookup:{shop-c}:lease:sync',
      JSON.stringify({ owner: 'crashed-instance', token: 1, expiresAt: deadUntil }),
      { PX: 120_000 },
    );
    await writer.close();
    const shops = (): string[] => [...SHOPS];
    // the instance that does not take shop-c over may look while the other lists it (its sweep reached shop-c later):
    // it then watches that lister's lease and looks again when it would lapse, leaseMs later (real time, as the
    // clock stands still); 2 s keeps that look within the test without the lease running out under a slow renewal
    const leaseMs = 2_000;
    await startHub({ shops, maxHotShops: 1, now, leaseMs });
    const first = hub;
    const second = createRelayHub({
      credentials: (shopId) => registry.get(shopId) ?? null,
      redis: redis.url,
      rateLimits: false,
      shops,
      maxHotShops: 1,
      now,
      leaseMs,
      refreshIntervalMs: 60 * 60 * 1000,
      retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
      observer: { log: () => undefined },
    });
    try {
      await Promise.all([first.sweep(), second.sweep()]);
      // shop-c is not listed while the dead lister's lease runs: both instances watch it
      expect(listCalls(mocks['shop-c'])).toBe(0);
      expect([...first.status().watching, ...second.status().watching]).toContain('shop-c');
      for (const shop of ['shop-a', 'shop-b'] as const) expect(listCalls(mocks[shop]), shop).toBe(1);
      // once it lapses, one of them takes it over (at its next look): listed once, not twice
      clockAt = deadUntil + 1;
      await expect.poll(() => listCalls(mocks['shop-c']), { timeout: 5_000 }).toBe(1);
      // then neither lists nor watches it any more (a look after the listing finds it listed and nobody's lease)
      await expect
        .poll(
          () => [
            ...first.status().watching,
            ...second.status().watching,
            ...first.status().listings.running,
            ...second.status().listings.running,
          ],
          { timeout: 10_000 },
        )
        .toEqual([]);
      expect(listCalls(mocks['shop-c'])).toBe(1);
      await Promise.all([first.sweep(), second.sweep()]);
      for (const shop of SHOPS) expect(listCalls(mocks[shop]), shop).toBe(1);
      // each instance kept at most one shop hot while walking three
      expect(first.status().hot.length).toBeLessThanOrEqual(1);
      expect(second.status().hot.length).toBeLessThanOrEqual(1);
      expect((await snapshotOf('shop-c')).codes).toContain('ONLY-shop-c');
    } finally {
      await second.close();
    }
  });

  it('lists every shop again as soon as Redis is back without its data, the cold ones too', async () => {
    // one shop hot at most, and no sweep by the clock within the test: only Redis coming back can start them
    await startHub({ shops: () => [...SHOPS], maxHotShops: 1, sweepIntervalMs: 60 * 60 * 1000 });
    await hub.sweep();
    for (const shop of SHOPS) expect(listCalls(mocks[shop]), shop).toBe(1);
    expect(hub.status().hot.length).toBeLessThanOrEqual(1);
    await redis.stop();
    await redis.start(); // without persistence: empty
    // (no till asks meanwhile: a shop asked for would be opened, and list, by that request)
    await expect.poll(() => SHOPS.map((shop) => listCalls(mocks[shop])), { timeout: 15_000 }).toEqual([2, 2, 2]);
    // a listing's page is read before it is committed: until then its shop answers 503 (not ready)
    for (const shop of SHOPS) {
      const feed = `/shops/${shop}/relay/v1/feed?limit=1`;
      await expect.poll(async () => (await get(feed, TILL_TOKENS[shop])).status, { timeout: 15_000 }).toBe(200);
    }
    for (const shop of SHOPS) expect((await snapshotOf(shop)).codes).toContain(`ONLY-${shop}`);
    for (const shop of SHOPS) expect(listCalls(mocks[shop]), shop).toBe(2);
  });

  it('bounds the listings running at once over all shops of an instance', async () => {
    await startHub({ maxConcurrentListings: 1 });
    // shop-a's first page is held at the API: shop-b's listing waits for the one slot meanwhile
    const held = mocks['shop-a'].hold({ path: LIST });
    const a = hub.refresh('shop-a');
    await held.arrived;
    const b = hub.refresh('shop-b');
    await expect.poll(() => hub.status().listings).toEqual({ running: ['shop-a'], waiting: 1 });
    expect(listCalls(mocks['shop-b'])).toBe(0);
    held.release();
    await Promise.all([a, b]);
    expect(listCalls(mocks['shop-b'])).toBeGreaterThan(0);
    expect(hub.status().listings).toEqual({ running: [], waiting: 0 });
  });
});

describe('createRelayHub options', () => {
  it('refuses wrong options when it is called, naming each', () => {
    const credentials = () => null;
    expect(() => createRelayHub({ credentials, maxHotShops: 0 })).toThrow(
      /^createRelayHub: option "maxHotShops" must be a whole number, at least 1\.$/,
    );
    expect(() => createRelayHub({ credentials, refreshIntervalMs: -1 } as RelayHubOptions)).toThrow(
      /^createRelayHub: .*"refreshIntervalMs"/,
    );
    expect(() => createRelayHub({ credentials, maxHotShop: 5 } as unknown as RelayHubOptions)).toThrow(
      /^createRelayHub: .*unknown option: "maxHotShop"/,
    );
    expect(() => createRelayHub({ credentials: 'db' } as unknown as RelayHubOptions)).toThrow(
      /option "credentials" must be a function/,
    );
  });
});

describe('two instances sweeping one shop', () => {
  it('does not list the shop again when the other committed between its look and its lease', async () => {
    const api = mocks['shop-a'];
    const store = createMemoryStore();
    const relays: ShopRelay[] = [];
    const options = {
      ...credentialsOf('shop-a', api),
      shopId: 'shop-a',
      public: true,
      rateLimits: false as const,
      refreshIntervalMs: 3_600_000,
    };
    // the second instance looks (coupons due), then the first lists and commits before the second gets the lease
    let raced = false;
    const racing: RelayStore = {
      ...store,
      async acquireLease(name, owner, ttlMs) {
        if (!raced) {
          raced = true;
          const first = createShopRelay({ ...options, store });
          relays.push(first);
          await first.refresh({ due: true });
          expect(listCalls(api)).toBe(1);
        }
        return store.acquireLease(name, owner, ttlMs);
      },
    };
    const second = createShopRelay({ ...options, store: racing });
    relays.push(second);
    try {
      await second.refresh({ due: true });
      expect(raced).toBe(true);
      expect(listCalls(api)).toBe(1);
      expect((await second.status()).confirmedAt.coupons).toBeGreaterThan(0);
    } finally {
      for (const relay of relays) await relay.close();
    }
  });
});
