// shop-lookup/relay: the server half. Syncs the shop API once per shop and serves every till a versioned snapshot
// plus changes; several instances share one sync through Redis.
export { createShopRelay } from './createShopRelay';
export { createMemoryStore } from './memoryStore';
export type { MemoryStoreOptions } from './memoryStore';
export type {
  FeedChange,
  FeedHead,
  FeedRecord,
  Lease,
  ListingCheckpoint,
  ListingCommit,
  RelayStore,
  ResourceId,
  StagedRecord,
  StoreHealth,
} from './relayStore';
export type { Authorize, ClientLimits, RelayStatus, RouteName, ShopRelay, ShopRelayOptions } from './types';
