// The README's option for bundlers that do not follow `new URL(..., import.meta.url)` inside a dependency.
import { createShopLookup } from 'shop-lookup';

export const lookup = createShopLookup({
  baseUrl: '/shop-api',
  products: [13805],
  dbName: 'shop-lookup:factory',
  worker: () => new Worker(new URL('shop-lookup/worker', import.meta.url), { type: 'module' }),
});
