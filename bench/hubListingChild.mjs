// The hub's listing throughput, shops per minute, with 1 and with 3 instances (started by hubBench.mjs with
// --import tsx): a redis-server of its own, the multi-shop mock API in a process of its own
// (packages/test-kit/src/multiShopMockChild.ts: every shop its own key and its own rate limits, list 1/s and other
// 5/s as the API's), and hub instances each in a process of their own (packages/test-kit/src/hubChild.ts, gated: they
// walk the shops from one `sweep`
// message on, at most 4 listings each at once). Every shop has `coupons` coupons (two pages of 100: its second page
// waits for its shop's list limit). Timed from the sweep messages until Redis holds every shop's confirmed listing;
// Redis is emptied between the runs. argv[2]: { shops, coupons }. Prints one line of JSON: { runs: [{ instances, ms,
// shopsPerMinute }] }.
import { createClient } from 'redis';
import { startChildServer } from '../packages/test-kit/src/childProcess.ts';
import { startRedisServer } from '../packages/test-kit/src/redisServer.ts';

const { shops, coupons } = JSON.parse(process.argv[2]);
const ids = Array.from({ length: shops }, (_, i) => `shop-${String(i).padStart(3, '0')}`);
const redis = await startRedisServer();
const mock = await startChildServer('multiShopMockChild.ts', { shops, coupons });
const stopAll = async () => {
  await mock.stop().catch(() => undefined);
  await redis.stop();
};
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => void stopAll().finally(() => process.exit(1)));
const client = createClient({ url: redis.url });
await client.connect();

async function confirmedCount() {
  const answers = await Promise.all(ids.map((id) => client.hGet(`shop-lookup:{${id}}:feed:confirmed`, 'coupons')));
  return answers.filter((a) => a !== null).length;
}

async function run(instances) {
  await client.flushAll();
  await mock.request({ type: 'reset' });
  const hubs = await Promise.all(
    Array.from({ length: instances }, (_, i) =>
      startChildServer('hubChild.ts', {
        instance: `hub-${i + 1}`,
        redis: redis.url,
        mock: mock.url,
        shops: ids,
        leaseMs: 30_000,
        maxConcurrentListings: 4,
        maxHotShops: 20,
        gated: true,
      }),
    ),
  );
  const t0 = performance.now();
  const sweeps = hubs.map((hub) => hub.request({ type: 'sweep' }));
  for (;;) {
    if ((await confirmedCount()) === shops) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const ms = performance.now() - t0;
  await Promise.all(sweeps);
  const log = await mock.request({ type: 'log' });
  const lists = log.filter((e) => e.path === '/v2/shop/coupons');
  await Promise.all(hubs.map((hub) => hub.stop()));
  return {
    instances,
    ms,
    shopsPerMinute: shops / (ms / 60_000),
    listRequests: lists.length,
    throttled: log.filter((e) => e.status === 429).length,
  };
}

const runs = [await run(1), await run(3)];
process.stdout.write(`${JSON.stringify({ runs })}\n`);
await client.close();
await stopAll();
process.exit(0);
