// One relay hub instance in a process of its own, for the hub's scale test (started by childProcess.ts through
// tsx), so it can be killed (SIGKILL: no lease released) mid-listing. Its shops are `shop-000`… on the multi-shop
// mock (credentials key-<id> / secret-<id>); a till of a shop sends `authorization: Bearer till-<id>`. Every upstream
// request carries `x-hub-instance` so the mock's log names the instance. argv[2]: its config (`cluster`: the root
// nodes of a Redis Cluster, used instead of `redis`; `gated`: its shops are named only from the first `sweep` message
// on, so a bench times the walks from one moment). IPC: sweep, status, close.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCluster } from 'redis';
import { createRelayHub } from '@shop-lookup/relay';

const config = JSON.parse(process.argv[2] ?? '{}') as {
  instance: string;
  redis: string;
  cluster?: string[];
  mock: string;
  shops: string[];
  leaseMs: number;
  maxConcurrentListings: number;
  maxHotShops: number;
  gated?: boolean;
};
let named = config.gated !== true;
const known = new Set(config.shops);
// on a Redis Cluster: one node-redis cluster client, given to the hub
const cluster = config.cluster ? createCluster({ rootNodes: config.cluster.map((url) => ({ url })) }) : null;
cluster?.on('error', () => undefined);
const hub = createRelayHub({
  credentials: (shopId) =>
    known.has(shopId)
      ? { key: `key-${shopId}`, secret: `secret-${shopId}`, target: `${config.mock}/shops/${shopId}` }
      : null,
  shops: () => (named ? config.shops : []),
  redis: cluster ?? config.redis,
  leaseMs: config.leaseMs,
  maxConcurrentListings: config.maxConcurrentListings,
  maxHotShops: config.maxHotShops,
  refreshIntervalMs: 60 * 60 * 1000,
  retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
  authorize: (req, _route, shopId) => req.headers.authorization === `Bearer till-${shopId}`,
  fetch: (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('x-hub-instance', config.instance);
    return fetch(input, { ...init, headers });
  },
  observer: { log: (level, message) => console[level](`[${config.instance}] ${message}`) },
});
const server = createServer((req, res) => hub(req, res));
server.listen(0, '127.0.0.1', () => process.send?.({ ready: { port: (server.address() as AddressInfo).port } }));

process.on('disconnect', () => process.exit(0));
process.on('message', (raw) => {
  const message = raw as { id: number; type: string };
  const reply = (result: unknown): void => void process.send?.({ id: message.id, result });
  if (message.type === 'sweep') {
    named = true;
    void hub.sweep().then(() => reply(hub.status()));
  } else if (message.type === 'status') reply(hub.status());
  else if (message.type === 'close') {
    void hub.close().then(async () => {
      await cluster?.close().catch(() => undefined);
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
  }
});
