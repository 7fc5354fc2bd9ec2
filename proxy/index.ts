// shop-lookup/proxy: a same-origin proxy that holds the shop's API key/secret so browsers never do.
export { createShopApiProxy } from '../packages/relay/src/createShopApiProxy';
export type { ShopApiProxy, ShopApiProxyOptions } from '../packages/relay/src/door/types';
