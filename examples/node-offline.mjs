// The six lookups in Node, online and then offline, against the bundled mock API.
// Run after `npm run build`:  node examples/node-offline.mjs
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { filter, firstValueFrom } from 'rxjs';
import { createShopLookup } from 'shop-lookup';
import { startMockShopApi } from '@shop-lookup/mock-server';

const mock = await startMockShopApi(); // a real HTTP server on 127.0.0.1, the API's wire format
const lookup = createShopLookup({
  baseUrl: mock.url,
  auth: { key: 'demo-key', secret: 'demo-secret' }, // server side only: never ship these to a browser
  worker: false, // Node has no Worker: run the engine in this thread
  indexedDB: new IDBFactory(),
  IDBKeyRange,
  products: [13805],
});

// the first answer that is not waiting on a refresh any more
const settled = (lookup$) => firstValueFrom(lookup$.pipe(filter((r) => !r.fetching)));

async function showAll(title) {
  const results = {
    coupons: await settled(lookup.coupons()),
    coupon: await settled(lookup.coupon('WELCOME10')),
    issuedCoupon: await settled(lookup.issuedCoupon('IC-0000-OPEN')),
    productOptions: await settled(lookup.productOptions(13805)),
    productOptionByNo: await settled(lookup.productOptionByNo(13805, 12)),
    productOptionByCode: await settled(lookup.productOptionByCode(13805, '12')),
  };
  console.log(`-- ${title}`);
  for (const [name, r] of Object.entries(results)) {
    const what = Array.isArray(r.data) ? `${r.data.length} records` : (r.data?.name ?? 'null');
    console.log(`${name}: ${what} | offline: ${r.offline} | syncedAt: ${new Date(r.syncedAt).toISOString()}`);
  }
}

await lookup.sync();
await showAll('online');

await mock.close(); // the API is gone
const report = await lookup.sync(); // fails, and tells why; the local data stays
console.log(`sync without the API: ok=${report.ok}, ${report.errors[0]?.code}: ${report.errors[0]?.message}`);
await showAll('offline');

await lookup.close();
