// One relay hub's heap and a till's first sync of a hot vs a cold shop, in a process of its own (started by
// hubBench.mjs with --expose-gc --import tsx): a redis-server of its own, one mock API serving every shop the same
// coupons (under /shops/<id>/, so the mock's data is there before the baseline and counts once), the hub listing
// every shop through its sweep. Heap: after GC with the shops listed, less after GC before the hub was made.
// argv[2]: { shops, coupons, maxHotShops }. Prints one line of JSON: { heap, listMs, hot, hotSyncMs, coldSyncMs }.
import { createServer } from 'node:http';
import { createMockShopApiHandler } from '../mock-server/index.ts';
import * as relayEntry from '../relay/index.ts';
import { startRedisServer } from '../test/redisServer.ts';

const { shops, coupons, maxHotShops } = JSON.parse(process.argv[2]);
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
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` })));
};

const redis = await startRedisServer();
// its redis-server goes with it, also when the bench is stopped
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => void redis.stop().finally(() => process.exit(1)));
const mock = createMockShopApiHandler({ key: 'bench-key', secret: 'bench-secret', rateLimits: false, data: { seed: 7, coupons, issuedCoupons: 0, products: 2 } });
const api = await listen((req, res) => {
  req.url = req.url.replace(/^\/shops\/[^/]+/, '');
  mock.handler(req, res);
});
const before = await settle();

const hub = relayEntry.createRelayHub({
  // every shop its own path on the one mock
  credentials: (id) => ({ key: 'bench-key', secret: 'bench-secret', target: `${api.origin}/shops/${id}` }),
  shops: () => ids,
  redis: redis.url,
  public: true,
  rateLimits: false,
  clientLimits: false,
  maxHotShops,
  maxConcurrentListings: 4,
  sweepIntervalMs: 3_600_000,
});
const server = await listen(hub);
const t0 = performance.now();
await hub.sweep();
const listMs = performance.now() - t0;
mock.resetRequests();
const held = await settle();
const hot = hub.status().hot;

/** A till's first sync as the relay serves it: every page of the shop's feed snapshot, ms. */
async function firstSync(shopId) {
  const t = performance.now();
  let url = `${server.origin}/shops/${shopId}/relay/v1/feed`;
  let handle = null;
  let n = 0;
  for (;;) {
    const res = await fetch(url);
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
let hotSyncMs = null;
let coldSyncMs = null;
if (shops > maxHotShops) {
  // a cold shop (not hot here: made hot again from Redis by the request), then the same shop again, now hot
  const hots = [];
  const colds = [];
  const cold = ids.filter((id) => !hub.status().hot.includes(id));
  for (let i = 0; i < 5; i++) {
    colds.push(await firstSync(cold[i]));
    hots.push(await firstSync(cold[i]));
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  hotSyncMs = med(hots);
  coldSyncMs = med(colds);
}
process.stdout.write(`${JSON.stringify({ heap: held - before, listMs, hot: hot.length, hotSyncMs, coldSyncMs })}\n`);
await hub.close();
server.server.closeAllConnections();
await redis.stop();
process.exit(0);
