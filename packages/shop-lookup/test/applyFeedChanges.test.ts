// Swapping a relay's new snapshot in (worker/sync/relay/applyFeedChanges.ts) is one step for every observer: a
// till whose relay started a new history while it has not listed a product's options yet keeps showing that
// product's options, never an empty list between two full ones. Every emission of the lookups is recorded.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import { createShopRelay, type ShopRelay } from '@shop-lookup/relay';
import type { ShopLookup } from '../src';
import { KEY, lookupFor, next, record, SECRET, startMock } from './utils';

const PRODUCT = 13805;

describe('a new relay snapshot swapped in', () => {
  let mock: MockShopApi;
  let relay: ShopRelay;
  let server: Server;
  let till: ShopLookup;

  const startRelay = () =>
    createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      public: true,
      rateLimits: false,
      products: [PRODUCT],
    });

  beforeEach(async () => {
    mock = await startMock();
    relay = startRelay();
    server = createServer((req, res) => relay(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    till = lookupFor(
      { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/shop-api` },
      { auth: undefined, products: [PRODUCT] },
    );
  });
  afterEach(async () => {
    await till.close();
    await relay.close();
    await new Promise((r) => server.close(r));
    await mock.close();
  });

  it("keeps a product's options on screen while the relay has not listed them yet, and takes the relay's list once it has", async () => {
    await relay.ready;
    expect((await till.sync()).ok).toBe(true);
    const expected = mock.data.products.get(PRODUCT)!.length;
    const options = record(till.productOptions(PRODUCT));
    const coupons = record(till.coupons());
    await next(till.productOptions(PRODUCT), (r) => r.data.length === expected);

    // The relay restarts with an empty store (a new history): it lists the coupons, and its listing of the
    // product's options is held at the API.
    const held = mock.hold({ path: `/v2/shop/products/${PRODUCT}/options` });
    await relay.close();
    relay = startRelay();
    await held.arrived;
    // the till's re-sync: "start again", the new snapshot (coupons only) is built aside and swapped in
    const resync = await till.sync();
    expect(resync.ok).toBe(true);
    expect((await next(till.status(), (s) => s.relayVersion !== null)).relayVersion).toBeGreaterThan(0);

    // the API answers: the relay lists the options, the till takes them with its next sync
    held.release();
    await relay.refresh();
    expect((await till.sync()).ok).toBe(true);

    const lengths = options.values.map((r) => r.data.length);
    expect(lengths.length).toBeGreaterThan(0);
    expect(
      lengths.every((n) => n === expected),
      `options emitted: ${lengths.join(' → ')}`,
    ).toBe(true);
    const couponCounts = coupons.values.map((r) => r.data.length);
    expect(
      couponCounts.every((n) => n === mock.data.coupons.length),
      `coupons emitted: ${couponCounts.join(' → ')}`,
    ).toBe(true);
    options.stop();
    coupons.stop();
  });
});
