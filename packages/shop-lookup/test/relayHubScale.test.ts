// The hub at scale (issue 20, proof): 200 small shops on one multi-shop mock API process, three hub instances (each a
// process of its own) on one real redis-server, and again on a three-master Redis Cluster, sweeping the shops with at
// most 4 listings each at once and 20 shops hot. One shop's list request is held at the mock until the test has
// SIGKILLed the instance that sent it (a crash: no lease released); the other two take its shops over once their
// leases lapse. Checked from the mock's request log and Redis: every shop listed exactly once, never by two instances
// at once, the crashed instance's shop by a survivor after the crash; then tills of 20 shops sync through the
// survivors and every record they hold is checked to be their own shop's.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { createClient, createCluster } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createShopLookup, type ShopLookup } from '../src';
import { startChildServer, type ChildServer } from '@shop-lookup/test-kit/childProcess';
import { startRedisCluster, type RedisClusterServers } from '@shop-lookup/test-kit/redisCluster';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { confirmed } from './utils';

const SHOPS = 200;
const COUPONS = 20;
const LEASE_MS = 2_000;
const TILLS = 20;
const HELD = 'shop-042';
const ids = Array.from({ length: SHOPS }, (_, i) => `shop-${String(i).padStart(3, '0')}`);

interface Entry {
  shop: string;
  path: string;
  offset: string | null;
  instance: string;
  at: number;
  end: number | null;
  status: number;
}
interface HubStatus {
  hot: string[];
  listings: { running: string[]; waiting: number };
  watching: string[];
}

let redis: RedisServer;
let cluster: RedisClusterServers;
let mock: ChildServer<{ port: number }>;
const hubs = new Map<string, ChildServer<{ port: number }>>();
const tills: ShopLookup[] = [];

beforeAll(async () => {
  [redis, cluster, mock] = await Promise.all([
    startRedisServer(),
    startRedisCluster(),
    startChildServer<{ port: number }>('multiShopMockChild.ts', { shops: SHOPS, coupons: COUPONS }),
  ]);
}, 30_000);

afterAll(async () => {
  await cluster?.stop();
  await mock?.stop();
  await redis?.stop();
}, 30_000);

// what one run started: its tills, its hubs still alive
afterEach(async () => {
  for (const till of tills.splice(0)) await till.close();
  await Promise.all([...hubs.values()].map((hub) => (hub.alive() ? hub.stop() : undefined)));
  hubs.clear();
}, 30_000);

/** Whether a shop's coupons were ever confirmed, read from the single server or the cluster. */
async function confirmedShops(on: 'redis' | 'cluster'): Promise<Set<string>> {
  const reader =
    on === 'redis'
      ? createClient({ url: redis.url })
      : createCluster({ rootNodes: cluster.urls.map((url) => ({ url })) });
  await reader.connect();
  const found = new Set<string>();
  try {
    for (const id of ids)
      if ((await reader.hGet(`shop-lookup:{${id}}:feed:confirmed`, 'coupons')) !== null) found.add(id);
  } finally {
    await reader.close();
  }
  return found;
}

describe.each(['redis', 'cluster'] as const)('the relay hub at scale on %s', (on) => {
  it("lists 200 shops once over three instances, takes a crashed one's shops over, and keeps every till to its own shop", async () => {
    // each run has a mock of its own state: a fresh log and holds (the shops' data are the same)
    await mock.request({ type: 'reset' });
    // the first list request of HELD is held at the mock; the mock answers this with the instance that sent it
    const heldBy = mock.request({ type: 'hold', shop: HELD } as { type: string }) as Promise<string>;
    const started = await Promise.all(
      ['hub-1', 'hub-2', 'hub-3'].map((instance) =>
        startChildServer<{ port: number }>('hubChild.ts', {
          instance,
          redis: redis.url,
          ...(on === 'cluster' ? { cluster: cluster.urls } : {}),
          mock: mock.url,
          shops: ids,
          leaseMs: LEASE_MS,
          maxConcurrentListings: 4,
          maxHotShops: 20,
        }).then((child) => [instance, child] as const),
      ),
    );
    for (const [instance, child] of started) hubs.set(instance, child);

    // the crash: the instance listing HELD dies mid-listing, its lease on HELD (and on what else it listed) held
    const crashed = await heldBy;
    const crashedAt = Date.now();
    await hubs.get(crashed)!.kill();
    await mock.request({ type: 'release', shop: HELD } as { type: string });
    const survivors = [...hubs].filter(([instance]) => instance !== crashed).map(([, hub]) => hub);

    // the survivors' walks, then their take-overs (each looks again when a lease it saw would lapse)
    await Promise.all(survivors.map((hub) => hub.request({ type: 'sweep' })));
    await expect
      .poll(
        async () => {
          const statuses = (await Promise.all(survivors.map((hub) => hub.request({ type: 'status' })))) as HubStatus[];
          return statuses.flatMap((s) => [...s.watching, ...s.listings.running]);
        },
        { timeout: 20_000, interval: 100 },
      )
      .toEqual([]);

    // every shop confirmed in Redis
    const confirmedIn = await confirmedShops(on);
    expect(ids.filter((id) => !confirmedIn.has(id))).toEqual([]);

    const log = (await mock.request({ type: 'log' })) as Entry[];
    const lists = log.filter((e) => e.path === '/v2/shop/coupons');
    const byShop = new Map<string, Entry[]>(ids.map((id) => [id, []]));
    for (const e of lists) byShop.get(e.shop)!.push(e);
    for (const [shop, entries] of byShop) {
      // listed once: one list answered 200 per shop, or two when the crashed instance's listing was answered but
      // never committed (it died first) and a survivor listed the shop again after the crash
      const answered = entries.filter((e) => e.status === 200);
      const bySurvivors = answered.filter((e) => e.instance !== crashed);
      const byCrashed = answered.filter((e) => e.instance === crashed);
      expect(bySurvivors.length, `${shop}: ${JSON.stringify(entries)}`).toBeLessThanOrEqual(1);
      expect(byCrashed.length, shop).toBeLessThanOrEqual(1);
      expect(answered.length, shop).toBeGreaterThanOrEqual(1);
      if (byCrashed.length + bySurvivors.length === 2)
        expect(bySurvivors[0]!.at, shop).toBeGreaterThanOrEqual(crashedAt);
      // never by two instances at once: one instance's requests end before another's start
      const sorted = [...entries].sort((a, b) => a.at - b.at);
      for (let i = 1; i < sorted.length; i++) {
        const [before, after] = [sorted[i - 1]!, sorted[i]!];
        if (before.instance !== after.instance)
          expect(before.end ?? Infinity, `${shop}: ${before.instance} then ${after.instance}`).toBeLessThanOrEqual(
            after.at,
          );
      }
    }
    // HELD: asked by the crashed instance, listed by a survivor after the crash, within a lease time or so of it
    const held = byShop.get(HELD)!;
    expect(held[0]!.instance).toBe(crashed);
    const takeover = held.find((e) => e.status === 200)!;
    expect(takeover.instance).not.toBe(crashed);
    expect(takeover.at).toBeGreaterThanOrEqual(crashedAt);
    // the work was spread: each survivor listed a fair part
    const perInstance = new Map<string, number>();
    for (const e of lists) if (e.status === 200) perInstance.set(e.instance, (perInstance.get(e.instance) ?? 0) + 1);
    for (const hub of hubs.keys())
      if (hub !== crashed) expect(perInstance.get(hub) ?? 0, hub).toBeGreaterThan(SHOPS / 10);
    console.info(
      `hub scale on ${on}: listings per instance ${JSON.stringify(Object.fromEntries(perInstance))}; ${crashed} crashed; ${HELD} taken over ${takeover.at - crashedAt} ms after the crash (lease ${LEASE_MS} ms)`,
    );

    // tills of 20 shops, through the survivors in turn: each holds its shop's coupons, and only them
    const tillShops = ids.filter((_, i) => i % (SHOPS / TILLS) === 2);
    expect(tillShops).toContain(HELD);
    const results = await Promise.all(
      tillShops.map(async (shop, i) => {
        const hub = survivors[i % survivors.length]!;
        const till = createShopLookup({
          baseUrl: `${hub.url}/shops/${shop}`,
          worker: false,
          indexedDB: new IDBFactory(),
          IDBKeyRange,
          rateLimits: false,
          refreshIntervalMs: 3_600_000,
          retry: { retries: 1, baseDelayMs: 10, maxDelayMs: 50 },
          dbName: `hub-till-${on}-${shop}`,
          fetch: (input, init) => {
            const headers = new Headers(init?.headers);
            headers.set('authorization', `Bearer till-${shop}`);
            return fetch(input, { ...init, headers });
          },
        });
        tills.push(till);
        const report = await till.sync();
        return { shop, report, list: (await confirmed(till.coupons(), 15_000)).data ?? [] };
      }),
    );
    for (const { shop, report, list } of results) {
      expect(report.ok, `${shop}: ${JSON.stringify(report)}`).toBe(true);
      expect(list.length, shop).toBeGreaterThan(COUPONS / 2);
      expect(
        list.map((c) => c.coupon_code),
        shop,
      ).toContain(`ONLY-${shop}`);
      // record by record: every coupon is this shop's (its name carries the shop)
      for (const coupon of list)
        expect(coupon.name, `${shop} holds ${coupon.coupon_code}`).toMatch(new RegExp(`\\[${shop}\\]$`));
    }
  }, 60_000);
});
