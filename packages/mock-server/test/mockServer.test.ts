import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from '@shop-lookup/test-kit/waitFor';
import {
  createMockData,
  createMockShopApiHandler,
  MOCK_CODES,
  startMockShopApi,
  type MockShopApi,
  type MockShopApiOptions,
} from '../src';

type Json = Record<string, any>;

const running: MockShopApi[] = [];
const servers: Server[] = [];

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(running.splice(0).map((api) => api.close()));
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(resolve);
        }),
    ),
  );
});

async function start(options: MockShopApiOptions = {}): Promise<MockShopApi> {
  const api = await startMockShopApi({ rateLimits: false, ...options });
  running.push(api);
  return api;
}

async function tokenOf(api: MockShopApi): Promise<string> {
  const res = await fetch(`${api.url}/v2/auth?key=demo-key&secret=demo-secret`);
  return ((await res.json()) as Json).access_token as string;
}

async function call(api: MockShopApi, path: string, token?: string, init: RequestInit = {}) {
  const headers = token ? { 'access-token': token } : undefined;
  const res = await fetch(`${api.url}${path}`, { headers, ...init });
  const text = await res.text();
  let body: Json | undefined;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** A started mock with a token, for the many tests that only read data. */
async function ready(options: MockShopApiOptions = {}) {
  const api = await start(options);
  const token = await tokenOf(api);
  return { api, token, get: (path: string) => call(api, path, token) };
}

/** Resolves to the error a fetch rejects with (or throws when it answers). */
async function failure(promise: Promise<unknown>): Promise<{ name: string; code: string | undefined }> {
  try {
    await promise;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return { name: (error as Error).name, code: cause?.code };
  }
  throw new Error('the request got an answer');
}

describe('startMockShopApi', () => {
  it('issues a token for GET /v2/auth with key and secret in the query, in the documented shape', async () => {
    const api = await start();
    const res = await call(api, '/v2/auth?key=demo-key&secret=demo-secret');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Object.keys(res.body ?? {}).sort()).toEqual(['access_token', 'code', 'http_code', 'msg']);
    expect(res.body).toMatchObject({ msg: 'SUCCESS', code: 200, http_code: 200 });
    expect((await call(api, '/v2/shop/coupons', res.body?.access_token)).body?.code).toBe(200);
  });

  it('issues a token for POST /v2/auth with a JSON body and with a form body', async () => {
    const api = await start({ key: 'k1', secret: 's1' });
    const json = await call(api, '/v2/auth', undefined, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'k1', secret: 's1' }),
    });
    const form = await call(api, '/v2/auth', undefined, {
      method: 'POST',
      body: new URLSearchParams({ key: 'k1', secret: 's1' }),
    });
    expect(json.body).toMatchObject({ code: 200 });
    expect(form.body).toMatchObject({ code: 200 });
    expect(json.body?.access_token).not.toBe(form.body?.access_token);
    expect((await call(api, '/v2/shop/coupons/WELCOME10', form.body?.access_token)).status).toBe(200);
  });

  it('answers a wrong key or secret with code -1 and HTTP 401', async () => {
    const api = await start();
    for (const query of ['key=demo-key&secret=nope', 'key=other&secret=demo-secret']) {
      const res = await call(api, `/v2/auth?${query}`);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: -1, version: 'latest', data: null });
      expect(res.body?.access_token).toBeUndefined();
    }
  });

  it('answers -2 with HTTP 401 without a token, with an unknown token and after expireTokens()', async () => {
    const { api, token, get } = await ready();
    expect((await get('/v2/shop/coupons')).status).toBe(200);
    for (const res of [await call(api, '/v2/shop/coupons'), await call(api, '/v2/shop/coupons', 'made-up')]) {
      expect(res.status).toBe(401);
      expect(res.body?.code).toBe(-2);
    }
    api.expireTokens();
    expect((await call(api, '/v2/shop/coupons', token)).body?.code).toBe(-2);
    expect((await call(api, '/v2/shop/coupons', await tokenOf(api))).body?.code).toBe(200);
  });

  it('expires a token after tokenTtlMs', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { get } = await ready({ tokenTtlMs: 60_000 });
    vi.setSystemTime(Date.now() + 59_000);
    expect((await get('/v2/shop/coupons')).status).toBe(200);
    vi.setSystemTime(Date.now() + 1_000);
    expect(await get('/v2/shop/coupons')).toMatchObject({ status: 401, body: { code: -2 } });
  });

  it('serves data without a token when requireAuth is false', async () => {
    const api = await start({ requireAuth: false });
    expect((await call(api, '/v2/shop/coupons/WELCOME10')).body?.data.coupon_code).toBe('WELCOME10');
  });

  it('pages lists by page number (offset), 25 rows by default, with data_count as a string', async () => {
    const { api, get } = await ready({ data: { coupons: 60 } });
    const first = await get('/v2/shop/coupons');
    expect(first.body?.data.pagenation).toEqual({ data_count: '60', current_page: 1, total_page: 3, pagesize: 25 });
    expect(first.body?.data.list).toEqual(api.data.coupons.slice(0, 25));
    const second = await get('/v2/shop/coupons?offset=2&limit=25');
    expect(second.body?.data.list).toEqual(api.data.coupons.slice(25, 50));
    const last = await get('/v2/shop/coupons?offset=3');
    expect(last.body?.data.list).toEqual(api.data.coupons.slice(50, 60));
    const past = await get('/v2/shop/coupons?offset=4');
    expect(past.body?.data).toEqual({
      list: [],
      pagenation: { data_count: '60', current_page: 4, total_page: 3, pagesize: 25 },
    });
    const clamped = await get('/v2/shop/coupons?limit=500');
    expect(clamped.body?.data.pagenation).toMatchObject({ pagesize: 100, total_page: 1 });
    expect(clamped.body?.data.list).toHaveLength(60);
  });

  it('sends data_count as a number when dataCountAs is number', async () => {
    const { get } = await ready({ dataCountAs: 'number', data: { coupons: 7 } });
    expect((await get('/v2/shop/coupons')).body?.data.pagenation.data_count).toBe(7);
  });

  it('answers a bad offset or limit with -10 and HTTP 400', async () => {
    const { get } = await ready();
    for (const query of ['offset=0', 'offset=abc', 'limit=-5', 'offset=1.5']) {
      expect(await get(`/v2/shop/coupons?${query}`)).toMatchObject({ status: 400, body: { code: -10 } });
    }
  });

  it('answers lists with a bare array of all rows when listShape is bare', async () => {
    const { api, get } = await ready({ listShape: 'bare', data: { coupons: 40 } });
    const res = await get('/v2/shop/coupons?offset=2&limit=10');
    expect(res.body?.data).toEqual(api.data.coupons);
    expect((await get(`/v2/shop/products/${MOCK_CODES.ambiguousProductNo}/options`)).body?.data).toHaveLength(3);
  });

  it('reaches the right record through a percent-encoded code with / ? # % & spaces and Korean', async () => {
    const { api, get } = await ready();
    const coupon = await get(`/v2/shop/coupons/${encodeURIComponent(MOCK_CODES.encodedCoupon)}`);
    expect(coupon.body?.data).toEqual(api.data.coupons[2]);
    expect(coupon.body?.data.coupon_code).toBe('봄 세일/10%?#&');
    const issued = await get(`/v2/shop/issue-coupons/${encodeURIComponent(MOCK_CODES.issuedEncoded)}`);
    expect(issued.body?.data.coupon_issue_code).toBe('IC/봄 세일?#%&1');
    const record = api.requests.at(-1);
    expect(record?.path).toBe('/v2/shop/issue-coupons/IC/봄 세일?#%&1');
    expect(record?.rawPath).toBe(`/v2/shop/issue-coupons/${encodeURIComponent('IC/봄 세일?#%&1')}`);
  });

  it('answers a malformed percent-encoding with -10 and HTTP 400', async () => {
    const { get } = await ready();
    expect(await get('/v2/shop/coupons/%E0%A4%A')).toMatchObject({ status: 400, body: { code: -10 } });
  });

  it('answers option segment "12" with option no 12, not with the option whose code is "12"', async () => {
    const { get } = await ready();
    const base = `/v2/shop/products/${MOCK_CODES.ambiguousProductNo}/options`;
    expect((await get(`${base}/12`)).body?.data).toMatchObject({ no: 12, code: 'SIZE' });
    expect((await get(`${base}/SIZE`)).body?.data).toMatchObject({ no: 12, code: 'SIZE' });
    expect((await get(`${base}/3`)).body?.data).toMatchObject({ no: 3, code: '12' });
    expect((await get(`${base}/MEMO`)).body?.data).toMatchObject({ no: 14, type: 'input' });
    const list = (await get(base)).body?.data.list as Json[];
    expect(list.map((option) => [option.no, option.code])).toEqual([
      [3, '12'],
      [12, 'SIZE'],
      [14, 'MEMO'],
    ]);
  });

  it('answers -11 with HTTP 404 for unknown records and -10 for a product number that is not an integer', async () => {
    const { get } = await ready();
    for (const path of [
      '/v2/shop/coupons/NOPE',
      '/v2/shop/issue-coupons/IC-NOPE',
      '/v2/shop/products/99999/options',
      `/v2/shop/products/${MOCK_CODES.ambiguousProductNo}/options/999`,
      `/v2/shop/products/${MOCK_CODES.ambiguousProductNo}/options/NOPE`,
      '/v2/shop/coupons/NOPE/issue-coupons',
    ]) {
      expect(await get(path)).toMatchObject({ status: 404, body: { code: -11, data: null } });
    }
    expect(await get('/v2/shop/products/abc/options')).toMatchObject({ status: 400, body: { code: -10 } });
  });

  it('lists the issued coupons of a coupon on the undocumented issue-coupons path', async () => {
    const { api, get } = await ready();
    const res = await get(`/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}/issue-coupons?limit=100`);
    const expected = api.data.issuedCoupons.filter((issued) => issued.coupon_code === 'WELCOME10');
    expect(res.body?.data.list).toEqual(expected);
    expect(expected[0]).toMatchObject({ coupon_issue_code: MOCK_CODES.issuedUnused, status: 'progress', use_date: '' });
    expect((await get(`/v2/shop/issue-coupons/${MOCK_CODES.issuedUsed}`)).body?.data).toMatchObject({
      coupon_code: 'FIXED3000',
      status: 'complete',
      shop_order_code: '202609150001234',
    });
  });

  it('answers other methods with -99 and unknown paths with -98, both HTTP 501 with an envelope', async () => {
    const { api, token, get } = await ready();
    const post = await call(api, '/v2/shop/coupons', token, { method: 'POST', body: '{}' });
    expect(post).toMatchObject({ status: 501, body: { code: -99, version: 'latest' } });
    expect(await get('/v2/shop/orders')).toMatchObject({ status: 501, body: { code: -98 } });
    expect(await call(api, '/elsewhere')).toMatchObject({ status: 501, body: { code: -98 } });
  });

  it('sends every error with HTTP 200 and only the body code when httpStatus is always200', async () => {
    const { api, get } = await ready({ httpStatus: 'always200' });
    expect(await get('/v2/shop/coupons/NOPE')).toMatchObject({ status: 200, body: { code: -11 } });
    expect(await call(api, '/v2/shop/coupons')).toMatchObject({ status: 200, body: { code: -2 } });
  });

  it('throttles a second list call within a second with 429, -7, TOO MANY REQUEST and Retry-After', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const api = await start({ rateLimits: undefined });
    const token = await tokenOf(api);
    expect((await call(api, '/v2/shop/coupons', token)).status).toBe(200);
    vi.setSystemTime(Date.now() + 500);
    const throttled = await call(api, '/v2/shop/coupons?offset=2', token);
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({ code: -7, msg: 'TOO MANY REQUEST' });
    expect(throttled.headers.get('retry-after')).toBe('1');
    // The limit is per shop key: a second token of the same shop shares it.
    expect((await call(api, `/v2/shop/products/${MOCK_CODES.firstProductNo}/options`, await tokenOf(api))).status).toBe(
      429,
    );
    expect(api.requests.filter((record) => record.throttled)).toHaveLength(2);
    // Throttled calls do not use up the window: one second after the first call, the next one passes.
    vi.setSystemTime(Date.now() + 501);
    expect((await call(api, '/v2/shop/coupons?offset=2', token)).status).toBe(200);
  });

  it('allows 5 other calls per second, counting the auth call', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const api = await start({ rateLimits: undefined });
    const token = await tokenOf(api);
    for (let i = 0; i < 4; i++) expect((await call(api, '/v2/shop/coupons/WELCOME10', token)).status).toBe(200);
    expect((await call(api, '/v2/shop/coupons/WELCOME10', token)).body?.code).toBe(-7);
    expect((await call(api, '/v2/auth?key=demo-key&secret=demo-secret')).body?.code).toBe(-7);
    vi.setSystemTime(Date.now() + 1_001);
    expect((await call(api, '/v2/shop/coupons/WELCOME10', token)).status).toBe(200);
  });

  it('lets everything through when rateLimits is false', async () => {
    const { get } = await ready({ rateLimits: false });
    const statuses = [];
    for (let i = 0; i < 12; i++) statuses.push((await get('/v2/shop/coupons')).status);
    expect(statuses).toEqual(Array(12).fill(200));
  });

  it.each([
    ['http500', 500, -19],
    ['code-19', 500, -19],
    ['code-999', 500, -999],
    ['throttle', 429, -7],
    ['expire-token', 401, -2],
    ['bad-credentials', 401, -1],
    ['permission', 401, -5],
  ] as const)('injects %s as HTTP %i with code %i, once', async (fault, status, code) => {
    const { api, get } = await ready();
    api.inject(fault);
    expect(await get('/v2/shop/coupons')).toMatchObject({ status, body: { code } });
    expect(api.requests.at(-1)).toMatchObject({ fault, status, code, throttled: fault === 'throttle' });
    expect((await get('/v2/shop/coupons')).status).toBe(200);
  });

  it('keeps http500 an HTTP 500 in always200 mode, unlike code-19', async () => {
    const { api, get } = await ready({ httpStatus: 'always200' });
    api.inject('http500');
    api.inject('code-19', { after: 1 });
    expect((await get('/v2/shop/coupons')).status).toBe(500);
    expect(await get('/v2/shop/coupons')).toMatchObject({ status: 200, body: { code: -19 } });
  });

  it('injects drop as a connection-level failure', async () => {
    const { api, get } = await ready();
    api.inject('drop');
    expect((await failure(get('/v2/shop/coupons'))).name).toBe('TypeError');
    expect(api.requests.at(-1)).toMatchObject({ fault: 'drop', status: 0, code: null });
    expect((await get('/v2/shop/coupons')).status).toBe(200);
  });

  it('injects hang: no answer until the mock goes down', async () => {
    const { api, get } = await ready();
    api.inject('hang');
    let settled = false;
    const hung = get('/v2/shop/coupons');
    hung.then(
      () => (settled = true),
      () => (settled = true),
    );
    // arrived, and no answer was sent: it hangs (until the mock goes down, below)
    await waitFor(() => expect(api.requests.at(-1)).toMatchObject({ fault: 'hang', status: 0 }));
    expect(settled).toBe(false);
    api.setDown(true);
    expect((await failure(hung)).name).toBe('TypeError');
  });

  it('holds a matching request until released, then answers from the data as it is then', async () => {
    const { api, get } = await ready();
    const hold = api.hold({ path: '/v2/shop/coupons/WELCOME10' });
    let settled = false;
    const held = get('/v2/shop/coupons/WELCOME10').finally(() => (settled = true));
    expect((await hold.arrived).path).toBe('/v2/shop/coupons/WELCOME10');
    expect(hold.held).toBe(1);
    // other requests pass while it is held
    expect((await get('/v2/shop/coupons/FIXED3000')).status).toBe(200);
    expect(settled).toBe(false);
    api.upsertCoupon({ ...api.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!, name: '놓아준 뒤' });
    hold.release();
    const answer = await held;
    expect(answer.status).toBe(200);
    expect((answer.body as { data: { name: string } }).data.name).toBe('놓아준 뒤');
    expect(api.requests.find((r) => r.path === '/v2/shop/coupons/WELCOME10')?.fault).toBe('held');
  });

  it('holds and releases requests through the /__mock/holds control endpoints', async () => {
    const { api, get } = await ready();
    const made = await call(api, '/__mock/holds', undefined, {
      method: 'POST',
      body: JSON.stringify({ when: { path: '/v2/shop/coupons/FIXED3000' } }),
    });
    const { id } = made.body as { id: number };
    const held = get('/v2/shop/coupons/FIXED3000');
    await waitFor(async () =>
      expect((await call(api, `/__mock/holds/${id}`)).body).toMatchObject({ caught: true, held: 1 }),
    );
    expect((await call(api, `/__mock/holds/${id}`, undefined, { method: 'DELETE' })).body).toMatchObject({
      ok: true,
      held: 0,
    });
    expect((await held).status).toBe(200);
    expect((await call(api, '/__mock/holds/999')).status).toBe(404);
  });

  it('holds only the sending of an answer made at arrival when asked to (answered: true)', async () => {
    const { api, get } = await ready();
    const hold = api.hold({ path: '/v2/shop/coupons/WELCOME10', answered: true });
    const held = get('/v2/shop/coupons/WELCOME10');
    await hold.arrived;
    api.upsertCoupon({ ...api.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!, name: '도착한 뒤' });
    hold.release();
    expect(((await held).body as { data: { name: string } }).data.name).not.toBe('도착한 뒤');
  });

  it('injects truncated-json, html and wrong-content-type as broken bodies', async () => {
    const { api, get } = await ready();
    api.inject('truncated-json');
    const cut = await get('/v2/shop/coupons');
    expect(cut.status).toBe(200);
    expect(cut.body).toBeUndefined();
    expect(cut.text.startsWith('{"msg":"SUCCESS"')).toBe(true);

    api.inject('html');
    const html = await get('/v2/shop/coupons');
    expect(html.status).toBe(502);
    expect(html.headers.get('content-type')).toContain('text/html');
    expect(html.text).toContain('<html>');

    api.inject('wrong-content-type');
    const wrong = await get('/v2/shop/coupons');
    expect(wrong.headers.get('content-type')).toContain('text/html');
    expect(wrong.body?.data.list).toHaveLength(25);
  });

  it('injects malformed-record into one row of a list page, or into an item', async () => {
    const { api, get } = await ready();
    api.inject('malformed-record', { path: '/v2/shop/coupons' });
    const rows = (await get('/v2/shop/coupons')).body?.data.list as Json[];
    expect(rows.filter((row) => row.apply_sale_price === 'abc')).toHaveLength(1);
    expect(rows.map((row) => row.coupon_code)).toEqual(api.data.coupons.slice(0, 25).map((row) => row.coupon_code));
    api.inject('malformed-record');
    const option = await get(`/v2/shop/products/${MOCK_CODES.ambiguousProductNo}/options/SIZE`);
    expect(option.body?.data).toMatchObject({ no: 'abc', code: 'SIZE' });
  });

  it("injects repeat-page (a page answers the previous page's rows) and skip-rows", async () => {
    const { api, get } = await ready();
    api.inject('repeat-page');
    const page1 = (await get('/v2/shop/coupons?offset=1&limit=10')).body?.data.list;
    const page2 = (await get('/v2/shop/coupons?offset=2&limit=10')).body?.data;
    expect(page1).toEqual(api.data.coupons.slice(0, 10));
    expect(page2.list).toEqual(page1);
    expect(page2.pagenation.current_page).toBe(2);

    api.inject('skip-rows');
    const skipped = (await get('/v2/shop/coupons?offset=3&limit=10')).body?.data.list as Json[];
    expect(skipped.length).toBeLessThan(10);
    expect(skipped).toEqual(api.data.coupons.slice(30 - skipped.length, 30));
  });

  it('injects a delay before a normal answer', async () => {
    const { api, get } = await ready();
    api.inject({ delayMs: 120 });
    const started = performance.now();
    expect((await get('/v2/shop/coupons')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
    expect(api.requests.at(-1)?.fault).toBe('delay');
  });

  it('applies faults by path prefix or RegExp, after N matching requests, N times, in injection order', async () => {
    const { api, get } = await ready();
    api.inject('code-19', { path: '/v2/shop/products', after: 1, times: 2 });
    api.inject('code-999', { path: /\/options\/SIZE$/ });
    const options = `/v2/shop/products/${MOCK_CODES.ambiguousProductNo}/options`;
    const codes = [];
    for (const path of ['/v2/shop/coupons', options, options, `${options}/SIZE`, options, `${options}/SIZE`]) {
      codes.push((await get(path)).body?.code);
    }
    expect(codes).toEqual([200, 200, -19, -19, 200, -999]);
    api.inject('throttle', { times: Infinity });
    api.clearFaults();
    expect((await get('/v2/shop/coupons')).status).toBe(200);
  });

  it('makes fetch fail at the connection level while down, keep-alive connections included', async () => {
    const { api, get } = await ready();
    expect((await get('/v2/shop/coupons')).status).toBe(200);
    api.setDown(true);
    expect((await failure(get('/v2/shop/coupons'))).name).toBe('TypeError');
    expect((await failure(get('/v2/shop/coupons/WELCOME10'))).name).toBe('TypeError');
    expect((await call(api, '/__mock/state')).body).toMatchObject({ down: true });
    api.setDown(false);
    expect((await get('/v2/shop/coupons')).status).toBe(200);
    expect(api.requests.filter((record) => record.fault === 'down')).toHaveLength(2);
  });

  it('refuses connections after close(), even on a kept-alive connection', async () => {
    const api = await startMockShopApi({ rateLimits: false });
    const token = await tokenOf(api);
    expect((await call(api, '/v2/shop/coupons', token)).status).toBe(200);
    api.inject('hang');
    const hung = failure(call(api, '/v2/shop/coupons', token));
    await waitFor(() => expect(api.requests.at(-1)?.fault).toBe('hang'));
    const started = performance.now();
    await api.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await hung).name).toBe('TypeError');
    expect(await failure(call(api, '/v2/shop/coupons', token))).toEqual({ name: 'TypeError', code: 'ECONNREFUSED' });
  });

  it('serves the /__mock control endpoints', async () => {
    const { api, get } = await ready({ data: { coupons: 10, issuedCoupons: 5, products: 6 } });
    const post = (path: string, body: unknown, method = 'POST') =>
      call(api, path, undefined, {
        method,
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
    expect((await call(api, '/__mock/state')).body).toEqual({
      coupons: 10,
      issuedCoupons: 5,
      products: 6,
      requests: 1,
      throttled: 0,
      down: false,
      faults: 0,
    });
    expect((await post('/__mock/coupons', { coupon_code: 'NEW/1', name: '새 쿠폰' })).body).toEqual({ ok: true });
    expect((await get(`/v2/shop/coupons/${encodeURIComponent('NEW/1')}`)).body?.data.name).toBe('새 쿠폰');
    const removed = await call(api, `/__mock/coupons/${encodeURIComponent('NEW/1')}`, undefined, { method: 'DELETE' });
    expect(removed.body).toEqual({ ok: true, removed: true });
    expect((await get(`/v2/shop/coupons/${encodeURIComponent('NEW/1')}`)).body?.code).toBe(-11);

    const injected = await post('/__mock/faults', {
      fault: 'http500',
      when: { path: '/v2/shop/coupons', times: 'Infinity' },
    });
    expect(injected.body).toMatchObject({ ok: true });
    expect((await get('/v2/shop/coupons')).status).toBe(500);
    expect((await get('/v2/shop/coupons')).status).toBe(500);
    await call(api, '/__mock/faults', undefined, { method: 'DELETE' });
    expect((await get('/v2/shop/coupons')).status).toBe(200);
    expect((await post('/__mock/faults', { fault: 'explode' })).status).toBe(400);

    await post('/__mock/down', { down: true });
    expect((await failure(get('/v2/shop/coupons'))).name).toBe('TypeError');
    await post('/__mock/down', { down: false });

    const requests = (await call(api, '/__mock/requests')).body as unknown as Json[];
    expect(requests.map((record) => record.status)).toEqual([200, 200, 404, 500, 500, 200, 0]);
    await call(api, '/__mock/requests', undefined, { method: 'DELETE' });
    expect(api.requests).toHaveLength(0);
    expect((await call(api, '/__mock/nothing')).status).toBe(404);
  });

  it('answers CORS preflights with 204 without recording them, and sends CORS headers on answers', async () => {
    const { api, get } = await ready();
    const before = api.requests.length;
    const preflight = await fetch(`${api.url}/v2/shop/coupons`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'access-token',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('access-token');
    expect(api.requests).toHaveLength(before);
    const answer = await get('/v2/shop/coupons');
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-expose-headers')).toContain('Retry-After');

    const closed = await ready({ cors: false });
    expect((await closed.get('/v2/shop/coupons')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers after latencyMs', async () => {
    const { get } = await ready({ latencyMs: 80 });
    const started = performance.now();
    await get('/v2/shop/coupons');
    expect(performance.now() - started).toBeGreaterThanOrEqual(75);
  });

  it('answers from live data: upserts, removals, new option lists and a replaced data set', async () => {
    const { api, get } = await ready({ data: { coupons: 6 } });
    api.upsertCoupon({ coupon_code: 'WELCOME10', name: '바뀐 이름' });
    api.upsertCoupon({ coupon_code: 'ADDED', name: '추가' });
    expect(api.removeCoupon('FIXED3000')).toBe(true);
    expect(api.removeCoupon('FIXED3000')).toBe(false);
    const codes = ((await get('/v2/shop/coupons')).body!.data.list as Json[]).map((row) => row.coupon_code);
    expect(codes).toEqual([
      'WELCOME10',
      '봄 세일/10%?#&',
      'EXPIRED2025',
      'APPONLY',
      api.data.coupons[4]?.coupon_code,
      'ADDED',
    ]);
    api.setProductOptions(1, [{ no: 1, type: 'input', code: 'X', name: 'x', is_require: false }]);
    expect((await get('/v2/shop/products/1/options/X')).body?.data.no).toBe(1);
    api.upsertIssuedCoupon({ coupon_issue_code: 'IC-NEW', coupon_code: 'ADDED' });
    expect((await get('/v2/shop/issue-coupons/IC-NEW')).status).toBe(200);
    api.data = createMockData({ coupons: 0 });
    expect((await get('/v2/shop/coupons')).body?.data.pagenation.data_count).toBe('0');
  });

  it('sends list pages kept as text with cacheListPages, byte for byte as without, and sees replaced and removed rows', async () => {
    const plain = await ready({ data: { coupons: 250 } });
    const cached = await ready({ data: { coupons: 250 }, cacheListPages: true });
    const both = async (path: string) => [(await plain.get(path)).text, (await cached.get(path)).text];
    for (const path of [
      '/v2/shop/coupons?offset=2&limit=100',
      '/v2/shop/coupons?offset=2&limit=100',
      '/v2/shop/coupons?offset=3&limit=100',
      '/v2/shop/coupons',
    ]) {
      const [a, b] = await both(path);
      expect(b).toBe(a);
    }
    for (const api of [plain.api, cached.api]) api.upsertCoupon({ ...api.data.coupons[120], name: '바뀐 이름' });
    const [a, b] = await both('/v2/shop/coupons?offset=2&limit=100');
    expect(b).toBe(a);
    expect((JSON.parse(b!).data.list as Json[])[20]?.name).toBe('바뀐 이름');
    const removed = String(cached.api.data.coupons[130]!.coupon_code);
    for (const api of [plain.api, cached.api]) expect(api.removeCoupon(removed)).toBe(true);
    const [c, d] = await both('/v2/shop/coupons?offset=2&limit=100');
    expect(d).toBe(c);
    const page = JSON.parse(d!).data as { list: Json[]; pagenation: Json };
    expect(page.list.map((r) => r.coupon_code)).not.toContain(removed);
    expect(page.pagenation.data_count).toBe('249');
    cached.api.data = createMockData({ coupons: 0 });
    expect((await cached.get('/v2/shop/coupons?offset=2&limit=100')).body?.data.pagenation.data_count).toBe('0');
  });

  it('works as connect-style middleware, passing on paths outside /v2/ and /__mock/', async () => {
    const mock = createMockShopApiHandler({ rateLimits: false, requireAuth: false });
    const server = createServer((req, res) => mock.handler(req, res, () => res.writeHead(299).end('next')));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await fetch(`${base}/index.html`)).status).toBe(299);
    expect((await fetch(`${base}/v2`)).status).toBe(299);
    expect(((await (await fetch(`${base}/v2/shop/coupons/APPONLY`)).json()) as Json).data.use_app).toBe(true);
    expect(mock.requests).toHaveLength(1);
  });
});

describe('createMockData', () => {
  it('gives the same data for the same seed and different data for another seed', () => {
    const a = createMockData({ seed: 5 });
    expect(createMockData({ seed: 5 })).toEqual(a);
    expect(createMockData({ seed: 6 }).coupons.slice(5)).not.toEqual(a.coupons.slice(5));
    expect([a.coupons.length, a.issuedCoupons.length, a.products.size]).toEqual([240, 300, 24]);
    expect(createMockData({ seed: 5, coupons: 10 }).products).toEqual(a.products);
  });

  it('puts the fixed records at known positions', () => {
    const data = createMockData({ seed: 99 });
    expect(data.coupons.slice(0, 5).map((row) => row.coupon_code)).toEqual([
      MOCK_CODES.welcomeCoupon,
      MOCK_CODES.fixedCoupon,
      MOCK_CODES.encodedCoupon,
      MOCK_CODES.expiredCoupon,
      MOCK_CODES.appOnlyCoupon,
    ]);
    expect(data.coupons[0]).toMatchObject({
      apply_sale_percent: 10,
      apply_sale_type_max_price: 5000,
      apply_sale_type_minimum_price: 10000,
    });
    expect(data.coupons[1]).toMatchObject({ apply_sale_price: 3000, apply_sale_type_minimum_price: 20000 });
    expect(data.coupons[3]?.use_period).toBe('2025-01-01 00:00:00 ~ 2025-12-31 23:59:59');
    expect(data.coupons[4]?.use_app).toBe(true);
    expect(data.issuedCoupons.slice(0, 3).map((row) => row.coupon_issue_code)).toEqual([
      MOCK_CODES.issuedUnused,
      MOCK_CODES.issuedUsed,
      MOCK_CODES.issuedEncoded,
    ]);
    expect(new Set(data.coupons.map((row) => row.coupon_code)).size).toBe(240);
  });

  it('varies records the way the real API does', () => {
    const { coupons, products } = createMockData({ coupons: 2000 });
    const values = (field: string) => new Set(coupons.map((row) => row[field]));
    expect(values('type')).toEqual(new Set(['down', 'create']));
    expect(values('status')).toEqual(new Set(['progress', 'stop', 'end', 'ready']));
    expect([...values('is_duplication')].sort()).toEqual([0, 1, 'N', 'Y', false, true].sort());
    expect(coupons.some((row) => typeof row.apply_sale_price === 'string')).toBe(true);
    const periods = coupons.map((row) => String(row.use_period));
    expect(periods.some((p) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ~ /.test(p))).toBe(true);
    expect(periods.some((p) => /^\d{4}\/\d\d\/\d\d \d\d:\d\d ~ /.test(p))).toBe(true);
    expect(periods.some((p) => /^\d{10} ~ \d{10}$/.test(p))).toBe(true);
    expect(periods.includes('') && periods.includes('unlimited')).toBe(true);
    expect(coupons.some((row) => 'site_code' in row) && coupons.some((row) => 'coupon_target' in row)).toBe(true);
    const options = [...products.values()].flat();
    expect(new Set(options.map((option) => option.type))).toEqual(new Set(['default', 'color', 'input']));
    expect(options.some((o) => o.type === 'default' && Array.isArray(o.value_list))).toBe(true);
    const keyed = (o: Json) => o.type === 'color' && !Array.isArray(o.value_list) && typeof o.value_list === 'object';
    expect(options.some(keyed)).toBe(true);
    const inputs = options
      .filter((o) => o.type === 'input')
      .map((o) => ('value_list' in o ? JSON.stringify(o.value_list) : 'missing'));
    expect(new Set(inputs)).toEqual(new Set(['missing', '[]', '{}', 'null']));
  });

  // (how fast is the bench's business: a timing here would fail on a busy machine, not on slow code)
  it('generates 100,000 coupons with distinct codes', () => {
    const data = createMockData({ coupons: 100_000 });
    expect(data.coupons).toHaveLength(100_000);
    expect(new Set(data.coupons.map((row) => row.coupon_code)).size).toBe(100_000);
  });
});
