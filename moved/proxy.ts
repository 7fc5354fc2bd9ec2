// shop-lookup/proxy, deprecated: createShopApiProxy moved to @shop-lookup/relay (install it beside shop-lookup).
import { loadMoved } from './loadMoved';

const relay = await loadMoved('shop-lookup/proxy', '@shop-lookup/relay', () => import('@shop-lookup/relay'));

export const createShopApiProxy = relay.createShopApiProxy;
export type { ShopApiProxy, ShopApiProxyOptions } from '@shop-lookup/relay';
