// A Node server's use of the server entries, type-checked with no DOM library (tsconfig.server.json): the relay in
// front of the mock API, the credential proxy, and one memory store passed as the relay's store.
import { createServer, type IncomingMessage } from 'node:http';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import {
  createMemoryStore,
  createShopApiProxy,
  createShopRelay,
  type Authorize,
  type RelayStatus,
  type RelayStore,
  type ShopApiProxy,
  type ShopRelay,
} from '@shop-lookup/relay';

const mock: MockShopApi = await startMockShopApi();
const isTill = (req: IncomingMessage): boolean => req.headers['x-till'] === process.env.TILL_TOKEN;
const authorize: Authorize = (req, route) => route === 'productOptions' || isTill(req);
const store: RelayStore = createMemoryStore();
const relay: ShopRelay = createShopRelay({
  key: 'demo-key',
  secret: 'demo-secret',
  target: mock.url,
  basePath: '/shop-api',
  authorize,
  store,
});
const proxy: ShopApiProxy = createShopApiProxy({
  key: 'demo-key',
  secret: 'demo-secret',
  target: mock.url,
  basePath: '/shop-api',
  public: true,
});

createServer((req, res) => relay(req, res, () => proxy(req, res))).listen(8080);
const status: RelayStatus = await relay.status();
const version: number | null = status.version;
const limiter = store.rateLimiter({ list: 1, other: 5 });
await limiter.acquire('list', 'background');
export { version };
