// Errors that say who refused: the relay and the proxy mark their own 401/403/429 with our code and the route, and
// the engine reports `forbidden` (the shop's server does not allow this client …), never blaming the API key;
// the API's own -5 stays `permission_denied`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import { createShopApiProxy, type ShopApiProxy } from '@shop-lookup/relay';
import type { Authorize } from '@shop-lookup/relay';
import { BASE, relaysPerTest } from '@shop-lookup/test-kit/relayUtils';
import { confirmed, KEY, lookupFor, next, SECRET, startMock } from './utils';

const PRODUCT = 13805;
const storefront: Authorize = (_req, route) => ['productOptions', 'productOption', 'coupon'].includes(route);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function proxyWith(mock: MockShopApi, authorize: Authorize): Promise<string> {
  const proxy: ShopApiProxy = createShopApiProxy({
    key: KEY,
    secret: SECRET,
    target: mock.url,
    rateLimits: false,
    authorize,
  });
  const server: Server = createServer((req, res) => proxy(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    await proxy.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('refusals', () => {
  const { relayWith } = relaysPerTest();

  it('the relay marks its own refusals with our code and the route, on API paths and on its own routes', async () => {
    const f = await relayWith({ public: false, authorize: storefront }, {}, { listed: true });
    const list = await f.get('/v2/shop/coupons');
    expect(list.status).toBe(403);
    expect(list.body).toMatchObject({ code: -5, refusal: { code: 'forbidden', route: 'coupons', by: 'relay' } });
    const feed = await f.get('/relay/v1/feed');
    expect(feed.status).toBe(403);
    expect(feed.body).toMatchObject({ code: 'forbidden', refusal: { code: 'forbidden', route: 'feed', by: 'relay' } });
    // an answer the API gave is not marked
    const coupon = await f.get('/v2/shop/coupons/NOSUCHCODE');
    expect(coupon.body?.refusal).toBeUndefined();
  });

  it('the relay marks a 429 of its refused-request bound too', async () => {
    const f = await relayWith({ public: false, authorize: () => false, clientLimits: { refusedPerMinute: 1 } });
    await f.get('/v2/shop/coupons');
    const third = await f.get('/v2/shop/coupons/WELCOME10');
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({
      code: -7,
      refusal: { code: 'too_many_requests', route: 'coupon', by: 'relay' },
    });
  });

  it('an engine on a storefront relay reports forbidden for the coupon list, never the API key, and still syncs the options', async () => {
    const f = await relayWith({ public: false, authorize: storefront }, {}, { listed: true });
    const shop = lookupFor({ url: `${f.origin}${BASE}` }, { auth: undefined, products: [PRODUCT], source: 'direct' });
    cleanups.push(() => shop.close());
    const report = await shop.sync();
    expect(report.ok).toBe(false);
    expect(report.errors.map((e) => e.code)).toEqual(['forbidden']);
    expect(report.errors[0]!.message).toMatch(
      /^The shop's server \(its relay\) does not allow this client to list the coupons\./,
    );
    expect(report.errors[0]!.message).not.toMatch(/API key lacks/);
    const options = await confirmed(shop.productOptions(PRODUCT));
    expect(options.data.length).toBe(f.api.data.products.get(PRODUCT)!.length);
  });

  it('an engine behind a proxy that refuses issued coupons reports forbidden, naming the proxy', async () => {
    const mock = await startMock();
    cleanups.push(() => mock.close());
    const url = await proxyWith(mock, (_req, route) => route !== 'issuedCoupon');
    const shop = lookupFor({ url }, { auth: undefined });
    cleanups.push(() => shop.close());
    const report = await shop.prefetchIssuedCoupons(['IC-0000-OPEN']);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]).toMatchObject({ code: 'forbidden', status: 403 });
    expect(report.errors[0]!.message).toMatch(
      /^The shop's server \(its proxy\) does not allow this client to read an issued coupon\./,
    );
  });

  it('a till on a relay that refuses it every data route: the sync is not ok, and an existing coupon is not "not found"', async () => {
    // the relay answers this client's discovery (its routes leave the feed and the coupons out), nothing else
    const f = await relayWith(
      { public: false, authorize: (_req, route) => ['discovery', 'status'].includes(route) },
      {},
      { listed: true },
    );
    const till = lookupFor({ url: `${f.origin}${BASE}` }, { auth: undefined });
    cleanups.push(() => till.close());
    const report = await till.sync();
    expect(report.ok).toBe(false);
    expect(report.errors.at(-1)).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/^Nothing was synced: the shop's server refuses this client/),
    });
    const status = await next(till.status(), (s) => s.phase !== 'syncing');
    expect(status.lastError).toMatchObject({ code: 'forbidden' });
    const verdict = await till.validateCoupon('WELCOME10', { amount: 32000 });
    expect(verdict).toMatchObject({
      ok: false,
      reason: 'unchecked',
      source: 'local',
      detail: { error: { code: 'forbidden' } },
    });
    expect(verdict.detail!.message).toMatch(
      /^Code "WELCOME10" is not known on this till, and the shop API did not check it: The shop's server \(its relay\) does not allow this client to read a coupon by its code\./,
    );
    expect(verdict.detail!.message).not.toMatch(/confirmed by the shop API|cannot be reached/);
  });

  it('behind a proxy that refuses issued coupons, a code the API has no coupon for is unchecked, not "not found"', async () => {
    const mock = await startMock();
    cleanups.push(() => mock.close());
    const url = await proxyWith(mock, (_req, route) => route !== 'issuedCoupon');
    const till = lookupFor({ url }, { auth: undefined });
    cleanups.push(() => till.close());
    const verdict = await till.validateCoupon('IC-0000-OPEN', { amount: 32000 });
    expect(verdict).toMatchObject({
      ok: false,
      reason: 'unchecked',
      detail: { error: { code: 'forbidden', status: 403 } },
    });
    expect(verdict.detail!.message).toMatch(/its proxy\) does not allow this client to read an issued coupon/);
    // a storefront never asks for issued coupons: a code the API has no coupon for is not found
    const shop = lookupFor({ url }, { auth: undefined, coupons: 'byCode' });
    cleanups.push(() => shop.close());
    expect(await shop.validateCoupon('NO-SUCH-CODE', { amount: 32000 })).toMatchObject({
      ok: false,
      reason: 'not_found',
      source: 'network',
    });
    expect(mock.requests.filter((r) => r.path.startsWith('/v2/shop/issue-coupons'))).toEqual([]);
  });

  it("the API's own -5 stays permission_denied, through the proxy too", async () => {
    const mock = await startMock();
    cleanups.push(() => mock.close());
    const url = await proxyWith(mock, () => true);
    const shop = lookupFor({ url }, { auth: undefined });
    cleanups.push(() => shop.close());
    mock.inject('permission', { path: '/v2/shop/issue-coupons/IC-0000-OPEN' });
    const report = await shop.prefetchIssuedCoupons(['IC-0000-OPEN']);
    expect(report.errors[0]).toMatchObject({ code: 'permission_denied', apiCode: -5 });
  });
});

describe('refusals remembered', () => {
  const { relayWith } = relaysPerTest();

  /** A lookup on the relay whose every request path (under the base path) is recorded. */
  function recorded(origin: string, options: Parameters<typeof lookupFor>[1]) {
    const asked: string[] = [];
    const fetchRecording: typeof fetch = (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      asked.push(`${init?.method ?? 'GET'} ${url.pathname.slice(BASE.length)}`);
      return fetch(input, init);
    };
    const shop = lookupFor({ url: `${origin}${BASE}` }, { auth: undefined, fetch: fetchRecording, ...options });
    cleanups.push(() => shop.close());
    return { shop, asked, count: (what: string) => asked.filter((a) => a === what).length };
  }

  /** Resolves once `n` syncs have ended (status leaves 'syncing' n times). */
  function syncsEnded(shop: ReturnType<typeof lookupFor>, n: number): Promise<void> {
    let ended = 0;
    let wasSyncing = false;
    return new Promise((resolve) => {
      const sub = shop.status().subscribe((s) => {
        if (s.phase === 'syncing') wasSyncing = true;
        else if (wasSyncing) {
          wasSyncing = false;
          if (++ended >= n) {
            queueMicrotask(() => sub.unsubscribe());
            resolve();
          }
        }
      });
    });
  }

  it('asks a refused coupon list once per start, reports it skipped after, and asks again on sync()', async () => {
    const f = await relayWith({ public: false, authorize: storefront }, {}, { listed: true });
    const r = recorded(f.origin, { products: [PRODUCT], source: 'direct', refreshIntervalMs: 30 });
    await syncsEnded(r.shop, 4);
    expect(r.count('GET /v2/shop/coupons')).toBe(1);
    expect(r.count(`GET /v2/shop/products/${PRODUCT}/options`)).toBeGreaterThanOrEqual(4);
    const status = await next(r.shop.status(), (s) => s.phase === 'idle');
    expect(status.refused?.map((e) => e.code)).toEqual(['forbidden']);
    expect(status.lastError).toBeNull();
    const report = await r.shop.sync(); // the host asks: once more
    expect(r.count('GET /v2/shop/coupons')).toBe(2);
    expect(report.errors.map((e) => e.code)).toEqual(['forbidden']);
  });

  it('on a relay that refuses the feed and products, asks each once per start, and a later sync, with nothing left to sync, is not ok', async () => {
    const f = await relayWith({ public: false, authorize: storefront }, {}, { listed: true });
    const r = recorded(f.origin, { products: [PRODUCT], source: 'relay', refreshIntervalMs: 30 });
    await syncsEnded(r.shop, 4);
    expect(r.count('POST /relay/v1/products')).toBe(1);
    expect(r.asked.filter((a) => a.startsWith('GET /relay/v1/feed'))).toHaveLength(1);
    const status = await next(r.shop.status(), (s) => s.phase === 'error');
    expect(status.lastError).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/^Nothing was synced/),
    });
    expect(status.refused?.map((e) => e.message.match(/allow this client to (.*?)\./)?.[1])).toEqual([
      'add products to the shop-wide tracked set',
      "read the relay's feed (the coupon list and the options)",
    ]);
  });
});
