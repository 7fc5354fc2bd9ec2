// What `shop-lookup` is for the storefront recipe run in Node (test/storefrontRecipe.test.ts): the real
// createShopLookup, given what a browser has and Node lacks: IndexedDB (fake-indexeddb), and a page origin that a
// relative baseUrl ('/shop-api') resolves against, through a network that the test can cut.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { createShopLookup as create, type ShopLookupOptions } from '../../packages/shop-lookup/src';

export const page = {
  origin: '',
  offline: false,
  idb: new IDBFactory(),
  /** Every path the page asked the server for. */
  asked: [] as string[],
};

const pageFetch: typeof fetch = (input, init) => {
  const url = new URL(String(input), page.origin);
  page.asked.push(`${init?.method ?? 'GET'} ${url.pathname}`);
  if (page.offline) return Promise.reject(new TypeError('fetch failed', { cause: { code: 'ENETDOWN' } }));
  return fetch(url, init);
};

/**
 * @public (the pasted recipes import it as shop-lookup's)
 * @example createShopLookup({ baseUrl: '/shop-api', coupons: 'byCode' })
 */
export function createShopLookup(options: ShopLookupOptions) {
  return create({ ...options, worker: false, indexedDB: page.idb, IDBKeyRange, fetch: pageFetch });
}
