// The relay on a real Redis Cluster (issue 20, item 4): three redis-server masters in cluster mode started by the
// test. Every key of a shop carries its hash tag, so each shop lives in one slot on one master; a relay made with a
// node-redis cluster client lists the mock API, serves its snapshot and its changes, and a till syncs from it.
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../relay/src/store/redis/redisStore';
import type { RelayStore } from '../../relay/src/store/relayStore';
import type { ShopLookup } from '../src';
import { startRedisCluster, type RedisClusterServers } from '@shop-lookup/test-kit/redisCluster';
import { relaysPerTest } from '@shop-lookup/test-kit/relayUtils';
import { confirmed, lookupFor } from './utils';

let servers: RedisClusterServers;
const clients: { isOpen: boolean; close(): Promise<void>; destroy(): void }[] = [];

/** A node-redis cluster client of the test's cluster (closed after the file). */
function clusterClient() {
  const client = createCluster({ rootNodes: servers.urls.map((url) => ({ url })) });
  clients.push(client);
  return client;
}

/** Every key on every master, by master. */
async function keysByMaster(match: string): Promise<string[][]> {
  const client = clusterClient();
  await client.connect();
  const out: string[][] = [];
  for (const master of client.masters) {
    const node = await client.nodeClient(master);
    const keys: string[] = [];
    for await (const batch of node.scanIterator({ MATCH: match, COUNT: 1000 })) keys.push(...batch);
    out.push(keys);
  }
  return out;
}

beforeAll(async () => {
  servers = await startRedisCluster();
}, 30_000);

afterAll(async () => {
  for (const client of clients) if (client.isOpen) await client.close().catch(() => client.destroy());
  await servers?.stop();
});

const relays = relaysPerTest();

describe('the relay on a Redis Cluster', () => {
  it('keeps every key of a shop in one slot, shops spread over the masters, and one shop never sees another', async () => {
    const stores: RelayStore[] = [];
    const shops = Array.from({ length: 12 }, (_, i) => `cluster-shop-${i}`);
    for (const shopId of shops) stores.push(await createRedisStore({ redis: clusterClient(), shopId }));
    try {
      for (const [i, store] of stores.entries()) {
        const lease = (await store.acquireLease('sync', 'instance-1', 10_000))!;
        await store.stagePage(
          { resource: 'coupons', listing: 'l1', startedAt: 1_000, page: 1, totalPages: 1, dataCount: 1, unkeyed: 0 },
          [],
          lease,
        );
        await store.commitListing({
          resource: 'coupons',
          lease,
          confirmedAt: 1_000,
          upserts: [{ key: `ONLY-${i}`, record: { coupon_code: `ONLY-${i}` }, hash: `h${i}` }],
          deletes: [],
        });
        await store.trackProducts([13801]);
        await store.writeToken(`token-${i}`);
        await store.rateLimiter({ list: 1, other: 5 }).acquire('list', 'background');
      }
      for (const [i, store] of stores.entries()) {
        const { records } = await store.readSnapshot(null, 100);
        expect(records.map((r) => r.key)).toEqual([`ONLY-${i}`]);
        expect(await store.readToken()).toBe(`token-${i}`);
      }
      const byMaster = await keysByMaster('shop-lookup:{cluster-shop-*');
      const mastersOfShop = new Map<string, Set<number>>();
      byMaster.forEach((keys, master) => {
        for (const key of keys) {
          const tag = /^shop-lookup:\{(cluster-shop-\d+)\}:/.exec(key);
          expect(tag, key).not.toBeNull();
          mastersOfShop.set(tag![1]!, (mastersOfShop.get(tag![1]!) ?? new Set()).add(master));
        }
      });
      expect([...mastersOfShop.keys()].sort()).toEqual([...shops].sort());
      for (const masters of mastersOfShop.values()) expect(masters.size).toBe(1);
      // twelve shops over three masters: more than one master holds shops (else the test proves nothing)
      expect(new Set([...mastersOfShop.values()].map((m) => [...m][0])).size).toBeGreaterThan(1);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it("keeps a shop's issued-coupon uses in its slot and merges, confirms and drops them there", async () => {
    const store = await createRedisStore({ redis: clusterClient(), shopId: 'cluster-uses' });
    try {
      const use = (entry: string, at: number) => ({
        entry,
        code: 'IC-1',
        couponCode: null,
        orderId: entry,
        at,
        override: false,
      });
      const done = await store.commitUses({
        batches: [
          { device: 'd1', till: 'front-1', uses: [use('e1', 20)], receivedAt: 1_000 },
          { device: 'd2', till: 'back-2', uses: [use('x1', 10)], receivedAt: 1_000 },
        ],
        max: 100,
        expiredBefore: 0,
      });
      expect(done.outcomes).toEqual([
        { results: [{ entry: 'e1', recorded: true, conflict: { till: 'back-2', at: 10, orderId: 'x1' } }] },
        { results: [{ entry: 'x1', recorded: true, conflict: null }] },
      ]);
      expect((await store.readChunk!(null, 10)).records.map((r) => `${r.resource}/${r.key}`)).toEqual(['uses/IC-1']);
      expect((await store.dropUses({ codes: ['IC-1'] })).dropped).toEqual(['IC-1']);
      const changes = (await store.readChanges(0, 10))!;
      expect(changes.map((c) => `${c.op} ${c.resource}/${c.key}`)).toEqual(['upsert uses/IC-1', 'delete uses/IC-1']);
      const masters = (await keysByMaster('shop-lookup:{cluster-uses}:*')).filter((keys) => keys.length > 0);
      expect(masters).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('refuses a key prefix without a hash tag on a cluster, in words', async () => {
    await expect(createRedisStore({ redis: clusterClient(), shopId: 'x', prefix: 'flat:x:' })).rejects.toThrow(
      /must hold a hash tag/,
    );
  });

  it('lists the API, serves the snapshot and then the changes, and a till syncs from it', async () => {
    const f = await relays.relayWith(
      { redis: clusterClient(), shopId: 'cluster-relay' },
      { data: { coupons: 30 } },
      { listed: true },
    );
    const snap = await f.snapshot(7);
    const codes = f.api.data.coupons.map((c) => String(c.coupon_code));
    expect(snap.records.size).toBeGreaterThan(20);
    for (const key of snap.records.keys()) expect(codes).toContain(key.replace(/^coupons\//, ''));

    f.api.upsertCoupon({ ...f.api.data.coupons[3], name: 'renamed on the cluster' });
    const gone = String(f.api.data.coupons[5]!.coupon_code);
    f.api.removeCoupon(gone);
    await f.relay.refresh();
    const changes = await f.get(`/relay/v1/feed?since=${snap.version}&handle=${snap.handle}`);
    expect(changes.body).toMatchObject({ kind: 'changes', handle: snap.handle, shop: 'cluster-relay' });
    expect(changes.body!.upserts.map((u: { record: { name: string } }) => u.record.name)).toEqual([
      'renamed on the cluster',
    ]);
    expect(changes.body!.deletes).toEqual([{ resource: 'coupons', key: gone }]);

    const till: ShopLookup = lookupFor({ url: `${f.origin}/shop-api` }, { auth: undefined });
    try {
      expect((await till.sync()).ok).toBe(true);
      const list = (await confirmed(till.coupons())).data!;
      expect(list.some((c) => c.coupon_code === gone)).toBe(false);
      expect(list.find((c) => c.coupon_code === String(f.api.data.coupons[3]!.coupon_code))?.name).toBe(
        'renamed on the cluster',
      );
      expect(list.length).toBe(snap.records.size - 1);
      const status = await f.get('/relay/v1/status');
      expect(status.body).toMatchObject({ store: 'redis', degraded: false, shop: 'cluster-relay' });
    } finally {
      await till.close();
    }
  });
});
