#!/usr/bin/env node
// `npm run relay`: a shop relay on this machine, in front of the embedded mock shop API (its real rate limits on),
// on the embedded in-memory store, or on Redis when REDIS_URL is set. Prints its URL and how to point a till at it.
// The TypeScript sources are loaded through Vite's module runner (no build step, no extra dependency).
// Environment: PORT (default 8788), HOST (default 127.0.0.1), REDIS_URL, REFRESH_MS (default 300000).
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { runnerImport } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const { module: mockServer } = await runnerImport(`${root}mock-server/index.ts`);
const { module: relayEntry } = await runnerImport(`${root}relay/index.ts`);

const port = Number(process.env.PORT ?? 8788);
const host = process.env.HOST ?? '127.0.0.1';
const basePath = '/shop-api';
const api = await mockServer.startMockShopApi(); // accepts demo-key / demo-secret, list 1/s and other 5/s
const relay = relayEntry.createShopRelay({
  key: 'demo-key',
  secret: 'demo-secret',
  target: api.url,
  basePath,
  redis: process.env.REDIS_URL || undefined,
  refreshIntervalMs: Number(process.env.REFRESH_MS ?? 300_000),
  // a relay on your own machine in front of the mock: anybody on loopback may ask. A deployed relay passes
  // `authorize: (req, route) => ...` instead (see the README's relay section).
  public: true,
});
const server = createServer((req, res) => relay(req, res));
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, host, resolve);
});
try {
  await relay.ready;
} catch (error) {
  console.error(`The relay could not start: ${error?.message ?? error}`);
  process.exit(1);
}
const url = `http://${host}:${server.address().port}${basePath}`;
const status = await relay.status();
console.log(`shop relay for shop ${status.shop} on the ${status.store} store${process.env.REDIS_URL ? ` (${process.env.REDIS_URL})` : ''}
  relay:     ${url}   (feed: ${url}/relay/v1/feed, status: ${url}/relay/v1/status)
  upstream:  the mock shop API at ${api.url} (key demo-key, secret demo-secret, real rate limits)

Point a till at it (no credentials on the till):
  createShopLookup({ baseUrl: '${url}', dbName: 'shop-lookup:demo' })

Try it:  curl '${url}/relay/v1/feed?limit=3'
Ctrl-C stops it.`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.closeAllConnections();
  server.close();
  await relay.close();
  await api.close();
  process.exit(0);
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
