// The relay from the packed @shop-lookup/relay, installed alone (its Redis packages come along): on its embedded
// memory store it serves a snapshot; asked for a Redis that is not there, it says so and names the URL. Prints one
// JSON line.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { startMockShopApi } from '@shop-lookup/mock-server';
import { createShopRelay } from '@shop-lookup/relay';

const api = await startMockShopApi();
const relay = createShopRelay({
  key: 'demo-key',
  secret: 'demo-secret',
  target: api.url,
  basePath: '/shop-api',
  public: true,
});
const server = createServer(relay);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const feed = `http://127.0.0.1:${server.address().port}/shop-api/relay/v1/feed`;

// the first listing takes a moment: until then the feed says "not ready"
let snapshot = null;
for (let i = 0; i < 100 && !snapshot; i++) {
  const res = await fetch(feed);
  if (res.status === 200) snapshot = await res.json();
  else await new Promise((r) => setTimeout(r, 100));
}

const withRedis = createShopRelay({
  key: 'demo-key',
  secret: 'demo-secret',
  target: api.url,
  redis: 'redis://127.0.0.1:1',
  public: true,
});
const redisError = await withRedis.ready.then(
  () => null,
  (e) => `${e.code}: ${e.message}`,
);

await withRedis.close();
await relay.close();
server.close();
await api.close();
console.log(
  JSON.stringify({
    records: snapshot?.upserts.length ?? 0,
    redisError,
    installed: ['redis', 'rate-limiter-flexible'].filter((name) =>
      existsSync(new URL(`./node_modules/${name}`, import.meta.url)),
    ),
  }),
);
