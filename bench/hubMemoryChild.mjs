// One relay hub's heap and a till's first sync of a cold vs a hot shop, in a process of its own (started by
// hubBench.mjs with --expose-gc --import tsx): a redis-server of its own and one mock API serving every shop the same
// coupons (under /shops/<id>/). The shops' data gets into Redis through the store's own write path: shop 0 is listed
// from the mock by a hub, and its records and hashes are committed to every other shop as a listing commits them
// (commitListing under the shop's sync lease): listing 2,000,000 coupons upstream would take about 5 minutes here.
// Then a hub with maxHotShops and maxHotRecords (the budget: `budgetShops` shops' records) walks every shop (none is
// due) and tills read the snapshots of up to twice the budget's shops, each shop's records loaded after its read and
// the least recently used let go beyond the budget. Heap: after GC, less after GC before anything of the relay ran
// (what seeding left behind is garbage by then).
// Cold vs hot: a shop never asked for (not open, records in Redis only) read by a till, then, once its records are in
// memory, the same read again. argv[2]: { shops, coupons, budgetShops, pairs, maxHotRecords? } (maxHotRecords 0:
// every shop served from Redis, nothing waited for in memory: what open shops cost without their records).
// Prints one line of JSON: { heap, seedMs, readMs, redisBytesPerCoupon, open, inMemory, hotRecords, hotSyncMs,
// coldSyncMs }.
import { createServer } from 'node:http';
import { createMockShopApiHandler } from '../packages/mock-server/src/index.ts';
import * as relayEntry from '../packages/relay/src/index.ts';
import { createClient } from 'redis';
import { createRedisStore } from '../packages/relay/src/store/redis/redisStore.ts';
import { redisKeys, redisPrefix } from '../packages/relay/src/store/redis/redisKeys.ts';
import { connectSharedRedis } from '../packages/relay/src/store/redis/sharedRedis.ts';
import { startRedisServer } from '../packages/test-kit/src/redisServer.ts';

const { shops, coupons, budgetShops, pairs, maxHotRecords = budgetShops * coupons } = JSON.parse(process.argv[2]);
const ids = Array.from({ length: shops }, (_, i) => `shop-${String(i).padStart(4, '0')}`);
const gc = () => {
  globalThis.gc();
  globalThis.gc();
};
const settle = async () => {
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  return process.memoryUsage().heapUsed;
};
const listen = (handler) => {
  const server = createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` })),
  );
};
const waitFor = async (check, what) => {
  for (let i = 0; i < 3000; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
};

const redis = await startRedisServer();
// its redis-server goes with it, also when the bench is stopped
for (const signal of ['SIGTERM', 'SIGINT'])
  process.once(signal, () => void redis.stop().finally(() => process.exit(1)));
const mock = createMockShopApiHandler({
  key: 'bench-key',
  secret: 'bench-secret',
  rateLimits: false,
  data: { seed: 7, coupons, issuedCoupons: 0, products: 2 },
});
const api = await listen((req, res) => {
  req.url = req.url.replace(/^\/shops\/[^/]+/, '');
  mock.handler(req, res);
});
const hubOptions = {
  // every shop its own path on the one mock
  credentials: (id) => ({ key: 'bench-key', secret: 'bench-secret', target: `${api.origin}/shops/${id}` }),
  redis: redis.url,
  public: true,
  rateLimits: false,
  clientLimits: false,
  maxConcurrentListings: 4,
  sweepIntervalMs: 3_600_000,
};

// the baseline: before anything of the relay ran (its modules loaded since count, as they do in a hub's process)
const before = await settle();
const info = createClient({ url: redis.url });
await info.connect();
const redisUsed = async () => Number(/used_memory:(\d+)/.exec(await info.info('memory'))[1]);
const redisBefore = await redisUsed();

// ---- seeding: shop 0 listed, the others committed through the store as a listing commits --------------------------
const seedStart = performance.now();
{
  const lister = relayEntry.createRelayHub(hubOptions);
  await lister.refresh(ids[0]);
  await lister.close();
  const first = await createRedisStore({ redis: redis.url, shopId: ids[0] });
  const hashes = await first.readHashes('coupons');
  const upserts = [];
  for (let cursor = null, started = false; !started || cursor !== null; started = true) {
    const chunk = await first.readSnapshot(cursor, 5_000);
    for (const r of chunk.records)
      if (r.resource === 'coupons') upserts.push({ key: r.key, record: r.record, hash: hashes.get(r.key) });
    cursor = chunk.next;
  }
  const confirmedAt = (await first.head()).confirmedAt.coupons;
  await first.close();
  if (upserts.length !== coupons) throw new Error(`shop 0 listed ${upserts.length} coupons, expected ${coupons}`);
  const shared = await connectSharedRedis({ redis: redis.url });
  const workers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 1 + w; i < shops; i += 4) {
      const connection = await shared.forShop(redisKeys(redisPrefix(ids[i])).handle);
      const store = await createRedisStore({ redis: redis.url, shopId: ids[i], connection });
      const lease = await store.acquireLease('sync', 'bench-seed', 60_000);
      await store.commitListing({ resource: 'coupons', upserts, deletes: [], confirmedAt, lease });
      await store.releaseLease(lease);
      await store.close();
    }
  });
  await Promise.all(workers);
  await shared.close();
}
const seedMs = performance.now() - seedStart;
// what every shop's keys take in Redis (snapshot, record hashes, key index, and the change log the commits wrote)
const redisBytesPerCoupon = ((await redisUsed()) - redisBefore) / (shops * coupons);
await info.close();

const hub = relayEntry.createRelayHub({
  ...hubOptions,
  shops: () => ids,
  maxHotShops: budgetShops,
  maxHotRecords,
});
const server = await listen(hub);
await hub.sweep(); // every shop probed, none due (all listed just now)

/** A till's first sync as the relay serves it: every page of the shop's feed snapshot, ms. */
async function firstSync(shopId) {
  const t = performance.now();
  let url = `${server.origin}/shops/${shopId}/relay/v1/feed`;
  let handle = null;
  let n = 0;
  for (;;) {
    // as it is: the row compares serving from Redis with serving from memory, not compressing (a chunk compressed
    // for the cold read would be sent from the store to the hot one)
    const res = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    if (res.status !== 200) throw new Error(`${shopId}: feed answered ${res.status}`);
    const body = await res.json();
    n += body.upserts.length;
    handle ??= body.handle;
    if (body.cursor === null) break;
    url = `${server.origin}/shops/${shopId}/relay/v1/feed?cursor=${body.cursor}&handle=${handle}`;
  }
  if (n < coupons) throw new Error(`${shopId}: ${n} records, expected ${coupons}`);
  return performance.now() - t;
}
const inMemory = (id) => hub.status().inMemory.includes(id);

// tills read up to twice the budget's shops: each shop's records loaded after its read, the oldest let go beyond
const readStart = performance.now();
const readShops = ids.slice(0, Math.min(shops - pairs, 2 * budgetShops));
for (const id of readShops) {
  await firstSync(id);
  if (maxHotRecords > 0) await waitFor(() => inMemory(id), `${id}'s records in memory`);
}
const readMs = performance.now() - readStart;
const held = await settle();
const status = hub.status();

let hotSyncMs = null;
let coldSyncMs = null;
const untouched = ids.slice(readShops.length);
if (pairs > 0 && untouched.length >= pairs) {
  // a cold shop (never asked for here: not open, its records in Redis only), then the same shop again, once its
  // records are in memory
  const hots = [];
  const colds = [];
  for (const id of untouched.slice(0, pairs)) {
    colds.push(await firstSync(id));
    await waitFor(() => inMemory(id), `${id}'s records in memory`);
    hots.push(await firstSync(id));
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  hotSyncMs = med(hots);
  coldSyncMs = med(colds);
}
process.stdout.write(
  `${JSON.stringify({
    heap: held - before,
    seedMs,
    readMs,
    redisBytesPerCoupon,
    open: status.hot.length,
    inMemory: status.inMemory.length,
    hotRecords: status.hotRecords,
    hotSyncMs,
    coldSyncMs,
  })}\n`,
);
await hub.close();
server.server.closeAllConnections();
api.server.closeAllConnections();
await redis.stop();
process.exit(0);
