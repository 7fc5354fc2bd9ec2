// shop-lookup/relay: the server half. Syncs the shop API once per shop and serves every till a versioned snapshot
// plus changes; several instances share one sync through Redis.
export { createShopRelay } from './createShopRelay';
export { createShopApiProxy } from './createShopApiProxy';
export type { ShopApiProxy, ShopApiProxyOptions } from './proxyTypes';
export { createRelayHub } from './hub/createRelayHub';
export type {
  HubAuthorize,
  HubShopOptions,
  RelayHub,
  RelayHubObserver,
  RelayHubOptions,
  RelayHubStatus,
  ShopCredentials,
} from './hub/hubTypes';
// one memory store several relays of this process share (the `store` option); the RelayStore contract itself is
// the relay's own, not a plug-in point: a store of your own is not supported
export { createMemoryStore } from './store/memory/memoryStore';
export type { MemoryStoreOptions } from './store/memory/memoryStore';
export type { RelayStore, ResourceId, StoreHealth } from './store/relayStore';
export type {
  Authorize,
  ClientId,
  ClientLimits,
  CorsOptions,
  RelayObserver,
  RelayStatus,
  RouteName,
  ShopRelay,
  ShopRelayOptions,
  UsesEvent,
  UsesList,
} from './types';
