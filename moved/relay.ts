// shop-lookup/relay, deprecated: the relay moved to @shop-lookup/relay (install it beside shop-lookup).
import { loadMoved } from './loadMoved';

const relay = await loadMoved('shop-lookup/relay', '@shop-lookup/relay', () => import('@shop-lookup/relay'));

export const createShopRelay = relay.createShopRelay;
export const createRelayHub = relay.createRelayHub;
export const createMemoryStore = relay.createMemoryStore;
export type * from '@shop-lookup/relay';
