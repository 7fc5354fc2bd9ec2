// The deprecated entries of shop-lookup (one release): with @shop-lookup/relay and @shop-lookup/mock-server installed
// beside it, shop-lookup/relay, /proxy and /mock-server give the same functions and types (/mock-server/msw is
// checked with the DOM library, src/usage.ts: msw's types need it).
import { startMockShopApi, type MockShopApi } from 'shop-lookup/mock-server';
import { createShopApiProxy, type ShopApiProxy } from 'shop-lookup/proxy';
import {
  createMemoryStore,
  createRelayHub,
  createShopRelay,
  type RelayStatus,
  type ShopRelay,
} from 'shop-lookup/relay';

const mock: MockShopApi = await startMockShopApi();
const relay: ShopRelay = createShopRelay({
  key: 'demo-key',
  secret: 'demo-secret',
  target: mock.url,
  store: createMemoryStore(),
  public: true,
});
const proxy: ShopApiProxy = createShopApiProxy({
  key: 'demo-key',
  secret: 'demo-secret',
  target: mock.url,
  public: true,
});
const hub = createRelayHub({ credentials: () => null, public: true });
const status: RelayStatus = await relay.status();
export { hub, proxy, status };
