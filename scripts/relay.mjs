#!/usr/bin/env node
// `npm run relay`: the shop-lookup-relay command's own code (relay/server/runRelayProcess.ts) on this machine, in
// front of the embedded mock shop API (its real rate limits on): the mock's address and credentials are put in the
// environment, open to everybody on loopback (RELAY_PUBLIC), on the in-memory store or on Redis when REDIS_URL is
// set. Prints its URL and how to point a till at it. The TypeScript sources are loaded through tsx (no build
// step). Every variable of docs/relay.md ("Deploy") works here too (PORT default 8788, HOST
// default 127.0.0.1, LOG_LEVEL default warn, REFRESH_INTERVAL_MS, REDIS_URL, ...).
import { register } from 'tsx/esm/api';

register(); // the relay loads parts of itself lazily (the Redis store): the loader stays on for the whole run
const mockServer = await import('../packages/mock-server/src/index.ts');
const relayProcess = await import('../packages/relay/src/server/runRelayProcess.ts');

const api = await mockServer.startMockShopApi(); // accepts demo-key / demo-secret, list 1/s and other 5/s
const env = {
  HOST: '127.0.0.1',
  PORT: '8788',
  BASE_PATH: '/shop-api',
  LOG_LEVEL: 'warn',
  ...(process.env.REFRESH_MS ? { REFRESH_INTERVAL_MS: process.env.REFRESH_MS } : {}), // the older name
  ...process.env,
  SHOP_API_KEY: 'demo-key',
  SHOP_API_SECRET: 'demo-secret',
  SHOP_API_TARGET: api.url,
  // a relay on your own machine in front of the mock: anybody on loopback may ask. A deployed relay uses till
  // tokens instead (TILL_TOKENS_FILE, TILL_TOKEN_SECRET: see docs/relay.md, "Deploy").
  RELAY_PUBLIC: 'true',
};
const server = await relayProcess.runRelayProcess(env, { afterStop: () => api.close() });
const url = `${server.origin}${env.BASE_PATH}`;
const status = await server.relay.status();
console.log(`shop relay for shop ${status.shop} on the ${status.store} store${env.REDIS_URL ? ` (${env.REDIS_URL})` : ''}
  relay:     ${url}   (feed: ${url}/relay/v1/feed, status: ${url}/relay/v1/status)
  health:    ${server.origin}/healthz, ${server.origin}/readyz, metrics: ${server.origin}/metrics
  upstream:  the mock shop API at ${api.url} (key demo-key, secret demo-secret, real rate limits)

Point a till at it (no credentials on the till):
  createShopLookup({ baseUrl: '${url}', dbName: 'shop-lookup:demo' })

Try it:  curl '${url}/relay/v1/feed?limit=3'
Logs are JSON lines on stdout (LOG_LEVEL=info shows every request). Ctrl-C stops it.`);
