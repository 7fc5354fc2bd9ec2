// shop-lookup/mock-server/msw: the mock's own handler behind MSW. The same requests get the same answers from the
// MSW handlers as from the HTTP server; drops are network errors; controls, faults and rate limits steer both.
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_CODES, startMockShopApi, type MockShopApi } from '../src';
import { createMockShopApiMsw, type MockShopApiMsw } from '../src/msw';

const BASE = 'https://api.imweb.me';
const PROXIED = 'http://localhost:5173/shop-api';
const server = setupServer();
let started: MockShopApi[] = [];

// the real mock server (127.0.0.1) is reached through the network; anything else unhandled is a test error
beforeAll(() =>
  server.listen({
    onUnhandledRequest: (request, print) => void (new URL(request.url).hostname === '127.0.0.1' || print.error()),
  }),
);
afterEach(async () => {
  server.resetHandlers();
  await Promise.all(started.map((api) => api.close()));
  started = [];
});
afterAll(() => server.close());

function useMsw(options: Parameters<typeof createMockShopApiMsw>[0] = {}): MockShopApiMsw {
  const mock = createMockShopApiMsw(options);
  server.use(...mock.handlers);
  return mock;
}

async function answer(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, any> };
}

const token = async (base: string) =>
  (await answer(`${base}/v2/auth?key=demo-key&secret=demo-secret`)).body.access_token as string;

describe('createMockShopApiMsw', () => {
  it('answers every endpoint exactly as the mock server does (same data, paging, errors, envelopes)', async () => {
    useMsw({ rateLimits: false });
    const api = await startMockShopApi({ rateLimits: false });
    started.push(api);
    const paths = [
      '/v2/shop/coupons?page=2&limit=7',
      `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`,
      `/v2/shop/coupons/${encodeURIComponent(MOCK_CODES.encodedCoupon)}`,
      '/v2/shop/coupons/NO-SUCH-COUPON',
      `/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`,
      '/v2/shop/products/13805/options',
      '/v2/shop/products/13805/options/12',
      '/v2/shop/products/abc/options',
      '/v2/shop/unknown',
      '/v2/shop/coupons?limit=500',
      '/relay/v1', // an engine asks once whether baseUrl is a relay: no such service here either
    ];
    const [mswToken, serverToken] = [await token(BASE), await token(api.url)];
    for (const path of paths) {
      const viaMsw = await answer(`${BASE}${path}`, { headers: { 'access-token': mswToken } });
      const viaServer = await answer(`${api.url}${path}`, { headers: { 'access-token': serverToken } });
      expect(viaMsw, path).toEqual(viaServer);
    }
    expect(
      (await answer(`${BASE}/v2/shop/coupons?page=2&limit=7`, { headers: { 'access-token': mswToken } })).body.data
        .list,
    ).toHaveLength(7);
  });

  it('authenticates by POST with a JSON body and refuses wrong credentials with the API code', async () => {
    useMsw();
    const ok = await answer(`${BASE}/v2/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'demo-key', secret: 'demo-secret' }),
    });
    expect(ok.body).toMatchObject({ code: 200, access_token: expect.any(String) });
    const wrong = await answer(`${BASE}/v2/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'demo-key', secret: 'nope' }),
    });
    expect(wrong.body.code).toBe(-1);
    expect(await answer(`${BASE}/v2/shop/coupons`)).toMatchObject({ status: 401, body: { code: -2 } });
  });

  it('answers under a proxy path and changes what it answers through its controls', async () => {
    const mock = useMsw({ baseUrl: PROXIED, requireAuth: false, rateLimits: false });
    mock.upsertCoupon({ coupon_code: 'NEW1', name: '새 쿠폰', apply_sale_price: '15000', status: 'progress' });
    expect((await answer(`${PROXIED}/v2/shop/coupons/NEW1`)).body.data).toMatchObject({ name: '새 쿠폰' });
    expect(mock.requests.map((r) => r.path)).toEqual(['/v2/shop/coupons/NEW1']);
    // the HTTP control endpoints work too
    await fetch(`${PROXIED}/__mock/coupons`, {
      method: 'POST',
      body: JSON.stringify({ coupon_code: 'NEW2', name: '둘' }),
    });
    expect((await answer(`${PROXIED}/v2/shop/coupons/NEW2`)).body.data).toMatchObject({ name: '둘' });
    mock.data = { ...mock.data, coupons: [] };
    expect((await answer(`${PROXIED}/v2/shop/coupons/NEW1`)).body.code).toBe(-11);
  });

  it('keeps the mock rate limits: a second list call within the second is throttled (-7, HTTP 429)', async () => {
    const mock = useMsw();
    const t = await token(BASE);
    expect((await answer(`${BASE}/v2/shop/coupons`, { headers: { 'access-token': t } })).status).toBe(200);
    expect(await answer(`${BASE}/v2/shop/coupons`, { headers: { 'access-token': t } })).toMatchObject({
      status: 429,
      body: { code: -7 },
    });
    expect(mock.requests.at(-1)).toMatchObject({ throttled: true, status: 429 });
  });

  it('turns injected faults into answers and drops into network errors', async () => {
    const mock = useMsw({ requireAuth: false, rateLimits: false });
    mock.inject('http500', { path: '/v2/shop/coupons' });
    expect((await answer(`${BASE}/v2/shop/coupons`)).status).toBe(500);
    mock.inject('drop');
    await expect(fetch(`${BASE}/v2/shop/coupons`)).rejects.toThrow(TypeError);
    mock.setDown(true);
    await expect(fetch(`${BASE}/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`)).rejects.toThrow(TypeError);
    mock.setDown(false);
    expect((await answer(`${BASE}/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`)).status).toBe(200);
  });

  it('holds a hung request until the client aborts it, then lets it go', async () => {
    const mock = useMsw({ requireAuth: false, rateLimits: false });
    mock.inject('hang');
    const controller = new AbortController();
    const pending = fetch(`${BASE}/v2/shop/coupons`, { signal: controller.signal });
    const settled = pending.then(
      () => 'answered',
      (e: Error) => e.name,
    );
    // the request arrived and got no answer
    await expect.poll(() => mock.requests.length).toBe(1);
    expect(mock.requests[0]).toMatchObject({ fault: 'hang', status: 0 });
    controller.abort();
    expect(await settled).toBe('AbortError');
    expect((await answer(`${BASE}/v2/shop/coupons`)).status).toBe(200);
  });
});
