// coupons: 'byCode' (a storefront): the engine never lists coupons, reads one coupon through by its exact code and
// keeps it for offline, answers coupons() with only what it read, and syncs the tracked products' options as a till.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import type { Authorize } from '@shop-lookup/relay';
import { BASE, relaysPerTest } from '@shop-lookup/test-kit/relayUtils';
import { confirmed, lookupFor, next, startMock } from './utils';

// The docs' storefront recipe for a relay: product options and one coupon by its exact code.
const storefront: Authorize = (_req, route) => ['productOptions', 'productOption', 'coupon'].includes(route);

const PRODUCT = 13805;
const ORDER = { amount: 50_000 };

describe('storefrontMode', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup & { idb: IDBFactory };

  beforeEach(async () => {
    mock = await startMock();
    lookup = lookupFor(mock, { products: [PRODUCT], coupons: 'byCode' });
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  const listings = () => mock.requests.filter((r) => r.path === '/v2/shop/coupons');

  it('syncs the tracked products options and never asks for the coupon list', async () => {
    const report = await lookup.sync();
    expect(report).toMatchObject({ ok: true, errors: [] });
    const options = await confirmed(lookup.productOptions(PRODUCT));
    expect(options.data.length).toBe(mock.data.products.get(PRODUCT)!.length);
    expect(listings()).toEqual([]);
    const status = await next(lookup.status(), (s) => s.phase === 'idle');
    expect(status.lastSyncedAt.coupons).toBeNull();
    expect(status.lastSyncedAt.options).not.toBeNull();
  });

  it('reads a coupon through by its exact code, then answers it and validates it offline', async () => {
    await lookup.sync();
    const online = await confirmed(lookup.coupon('WELCOME10'));
    expect(online.data?.coupon_code).toBe('WELCOME10');
    expect(online.error).toBeNull();
    const verdict = await lookup.validateCoupon('WELCOME10', ORDER);
    expect(verdict).toMatchObject({ ok: true, source: 'network' });

    mock.setDown(true);
    const offline = await lookup.validateCoupon('WELCOME10', ORDER);
    expect(offline).toMatchObject({ ok: true, source: 'local' });
    const kept = await next(lookup.coupon('WELCOME10'), (r) => r.offline);
    expect(kept.data?.coupon_code).toBe('WELCOME10');
    // a code never read is not known offline: the list was never there to say it does not exist
    const unknown = await lookup.validateCoupon('SPRING5', ORDER);
    expect(unknown).toMatchObject({ ok: false, reason: 'unknown_offline' });
    expect(listings()).toEqual([]);
  });

  it('answers coupons() with only the coupons read by code, never confirmed as the list', async () => {
    await lookup.sync();
    await confirmed(lookup.coupon('WELCOME10'));
    const list = await next(lookup.coupons(), (r) => r.data.length > 0);
    expect(list.data.map((c) => c.coupon_code)).toEqual(['WELCOME10']);
    expect(list).toMatchObject({ syncedAt: null, fetching: false, error: null });
    expect(mock.data.coupons.length).toBeGreaterThan(1);
    expect(listings()).toEqual([]);
  });

  it('reads an issued coupon through by its code and keeps it for offline', async () => {
    const code = String(mock.data.issuedCoupons[0]!.coupon_issue_code);
    const issued = await next(lookup.issuedCoupon(code), (r) => r.data !== null && r.syncedAt !== null);
    expect(issued.data?.coupon_issue_code).toBe(code);
    mock.setDown(true);
    const verdict = await lookup.validateCoupon(code, ORDER);
    expect(verdict.source).toBe('local');
    expect(listings()).toEqual([]);
  });

  it("refuses a coupons option that is neither 'all' nor 'byCode'", () => {
    expect(() => lookupFor(mock, { coupons: 'some' as never })).toThrow(/option "coupons" must be 'all'/);
  });
});

describe('storefrontMode on a relay', () => {
  const { relayWith } = relaysPerTest();

  it('syncs the options and reads a coupon through a storefront relay, never asking for the feed or the coupon list', async () => {
    const f = await relayWith({ public: false, authorize: storefront }, {}, { listed: true });
    const asked: string[] = [];
    const recording: typeof fetch = (input, init) => {
      asked.push(new URL(String(input instanceof Request ? input.url : input)).pathname.slice(BASE.length));
      return fetch(input, init);
    };
    const shop = lookupFor(
      { url: `${f.origin}${BASE}` },
      { auth: undefined, products: [PRODUCT], coupons: 'byCode', fetch: recording },
    );
    try {
      const report = await shop.sync();
      expect(report).toMatchObject({ ok: true, errors: [] });
      const options = await confirmed(shop.productOptions(PRODUCT));
      expect(options.data.length).toBe(f.api.data.products.get(PRODUCT)!.length);
      expect(await shop.validateCoupon('WELCOME10', ORDER)).toMatchObject({ ok: true, source: 'network' });
      expect(
        asked.filter((p) => p.startsWith('/relay/v1/feed') || p === '/v2/shop/coupons' || p === '/relay/v1/products'),
      ).toEqual([]);
      expect(asked).toContain('/v2/shop/coupons/WELCOME10');
      // a code the shop does not have: not found (issued coupons, which this client may not read, are not asked)
      expect(await shop.validateCoupon('NO-SUCH-CODE', ORDER)).toMatchObject({
        ok: false,
        reason: 'not_found',
        source: 'network',
      });
      expect(asked.filter((p) => p.startsWith('/v2/shop/issue-coupons'))).toEqual([]);
    } finally {
      await shop.close();
    }
  });
});
