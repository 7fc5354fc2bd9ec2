// shop-lookup/relay: the server half. Syncs the shop API once per shop and serves every till a versioned snapshot
// plus changes; several instances share one sync through Redis.
export { createShopRelay } from './createShopRelay';
export { createShopApiProxy } from './createShopApiProxy';
export type { ShopApiProxy, ShopApiProxyOptions } from './proxyTypes';
export { createRelayHub } from './hub/createRelayHub';
export type { HubAuthorize, HubShopOptions, RelayHub, RelayHubObserver, RelayHubOptions, RelayHubStatus, ShopCredentials } from './hub/hubTypes';
export { createMemoryStore } from './store/memoryStore';
export type { MemoryStoreOptions } from './store/memoryStore';
// the store contract, every type of it (a RelayStore of your own implements these)
export type * from './store/relayStore';
export type { Authorize, ClientLimits, RelayObserver, RelayStatus, RouteName, ShopRelay, ShopRelayOptions } from './types';
