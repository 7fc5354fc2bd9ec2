// shop-lookup/proxy: a same-origin proxy that holds the shop's API key/secret so browsers never do.
export { createShopApiProxy } from './createShopApiProxy';
export type { ShopApiProxy, ShopApiProxyOptions } from './types';
