import { afterEach, describe, expect, it } from 'vitest';
import type { MockShopApi, MockShopApiOptions } from '@shop-lookup/mock-server';
import { createApiClient, type ApiClient } from '../src/api/apiClient';
import { readApiCode } from '../src/api/envelope';
import { createTransport } from '../src/api/httpTransport';
import { createRateLimiter } from '../src/api/rateLimiter';
import { RETRY_AFTER_MAX_MS, retryAfterMs } from '../src/api/retryAfter';
import type { ShopAuth } from '../src/types';
import { KEY, SECRET, startMock } from '@shop-lookup/test-kit/startMock';

let mock: MockShopApi | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

async function clientFor(
  options: MockShopApiOptions = {},
  auth: ShopAuth | null = { key: KEY, secret: SECRET },
): Promise<ApiClient> {
  mock = await startMock(options);
  const transport = createTransport({
    baseUrl: mock.url,
    fetch,
    limiter: createRateLimiter(false),
    timeoutMs: 2000,
    auth: auth ?? undefined,
  });
  return createApiClient({ transport, pageSize: 100 });
}

describe('createApiClient', () => {
  it('reads a body code sent as text ("-2") as the code: the token is renewed once, not retried as unreadable', async () => {
    mock = await startMock();
    const real = mock;
    let stringCodes = 1;
    // the first data answer carries its code as a string, as some gateways re-encode it
    const textCodeFetch: typeof fetch = async (input, init) => {
      const url = String(input);
      if (url.includes('/v2/shop/') && stringCodes-- > 0) {
        return new Response(JSON.stringify({ msg: 'token expired', code: '-2', data: null }), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      }
      return fetch(input, init);
    };
    const transport = createTransport({
      baseUrl: real.url,
      fetch: textCodeFetch,
      limiter: createRateLimiter(false),
      timeoutMs: 2000,
      auth: { key: KEY, secret: SECRET },
    });
    const client = createApiClient({ transport, pageSize: 100 });
    expect((await client.getCoupon('WELCOME10')).record?.coupon_code).toBe('WELCOME10');
    expect(real.requests.filter((r) => r.path === '/v2/auth')).toHaveLength(2); // renewed
  });

  it('reads body codes as numbers or as their text, and nothing else', () => {
    expect([-2, '-2', ' -11 ', '200', 200, '2a', '', null, Number.NaN, '-'].map(readApiCode)).toEqual([
      -2,
      -2,
      -11,
      200,
      200,
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  it('pages with offset as the page number and limit 100', async () => {
    const client = await clientFor();
    const page = await client.listCoupons(3);
    expect(page).toMatchObject({ page: 3, totalPages: 3, dataCount: 240, rowCount: 40 });
    const req = mock!.requests.find((r) => r.path === '/v2/shop/coupons')!;
    expect(req.query).toMatchObject({ offset: '3', limit: '100' });
  });

  it('reads data_count sent as a number as well as a string', async () => {
    const client = await clientFor({ dataCountAs: 'number' });
    expect((await client.listCoupons(1)).dataCount).toBe(240);
  });

  it('reads a list sent as a bare array in data', async () => {
    const client = await clientFor({ listShape: 'bare' });
    const page = await client.listCoupons(1);
    expect(page).toMatchObject({ totalPages: null, dataCount: 240, rowsPath: 'data' });
    expect(page.records).toHaveLength(240);
  });

  it('answers null for a code the API does not know (-11), also when errors come with HTTP 200', async () => {
    const client = await clientFor({ httpStatus: 'always200' });
    expect(await client.getCoupon('NOPE')).toEqual({ record: null });
  });

  it('sends the access-token header it got from /v2/auth', async () => {
    const client = await clientFor();
    await client.getCoupon('WELCOME10');
    const auth = mock!.requests.filter((r) => r.path === '/v2/auth');
    expect(auth).toHaveLength(1);
    expect(mock!.requests.at(-1)).toMatchObject({ path: '/v2/shop/coupons/WELCOME10', code: 200 });
  });

  it('sends no token when none is configured (a proxy adds it), and says so when refused', async () => {
    const client = await clientFor({}, null);
    await expect(client.getCoupon('WELCOME10')).rejects.toMatchObject({
      code: 'token_invalid',
      apiCode: -2,
      status: 401,
      message: expect.stringMatching(/the proxy in front of the API must add a valid token/),
    });
  });

  it('turns a wrong key/secret into a readable bad_credentials error', async () => {
    const client = await clientFor({}, { key: KEY, secret: 'wrong' });
    await expect(client.listCoupons(1)).rejects.toMatchObject({
      code: 'bad_credentials',
      apiCode: -1,
      message: expect.stringContaining(`[POST] ${mock!.url}/v2/auth: 401`), // the URL asked: the base, then the path
    });
  });

  it.each([
    ['html', 'network_error', /gateway answered HTTP 502/], // a gateway's error page: the API itself is unreachable
    ['truncated-json', 'bad_response', /not complete JSON/],
    ['http500', 'server_error', /internal error/],
    ['code-999', 'maintenance', /maintenance/],
    [
      'throttle',
      'rate_limited',
      /rate limit.*\[GET\] http:\/\/127\.0\.0\.1:\d+\/v2\/shop\/coupons: 429 TOO MANY REQUEST/,
    ],
    ['drop', 'network_error', /Could not reach the shop API/],
  ] as const)('reports a %s answer as %s, in words', async (fault, code, message) => {
    const client = await clientFor();
    mock!.inject(fault, { path: '/v2/shop/coupons' });
    await expect(client.listCoupons(1)).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
  });

  it('reports an HTML page that comes with HTTP 200 (a captive portal, a misrouted proxy) as bad_response', async () => {
    mock = await startMock();
    const portal: typeof fetch = async () =>
      new Response('<!doctype html><title>Wi-Fi login</title>', {
        status: 200,
        headers: { 'content-type': 'text/html' },
      });
    const transport = createTransport({
      baseUrl: mock.url,
      fetch: portal,
      limiter: createRateLimiter(false),
      timeoutMs: 2000,
    });
    await expect(createApiClient({ transport }).listCoupons(1)).rejects.toMatchObject({
      code: 'bad_response',
      message: expect.stringMatching(/an HTML page, not JSON/),
    });
  });

  it('honours a Retry-After of a year as ten minutes: its class is held back no longer than that', async () => {
    const year = 365 * 24 * 3600;
    expect([String(year), new Date(Date.now() + year * 1000).toUTCString(), '2', 'soon'].map(retryAfterMs)).toEqual([
      RETRY_AFTER_MAX_MS,
      RETRY_AFTER_MAX_MS,
      2000,
      undefined,
    ]);
    const waits: number[] = [];
    const limiter = createRateLimiter(
      { list: 100, other: 100 },
      { now: () => 0, setTimeout: (_fn, ms) => waits.push(ms), clearTimeout: () => undefined },
    );
    const throttled: typeof fetch = async () =>
      new Response(JSON.stringify({ msg: 'TOO MANY REQUEST', code: -7 }), {
        status: 429,
        headers: { 'retry-after': String(year) },
      });
    const transport = createTransport({ baseUrl: 'http://127.0.0.1:9', fetch: throttled, limiter, timeoutMs: 2000 });
    await expect(
      transport.request({ path: '/v2/shop/coupons', cls: 'list', priority: 'background' }),
    ).rejects.toMatchObject({ code: 'rate_limited', retryAfterMs: RETRY_AFTER_MAX_MS });
    void limiter.acquire('list', 'background').catch(() => undefined);
    expect(waits.at(-1)).toBe(RETRY_AFTER_MAX_MS);
    limiter.dispose();
  });

  it('holds back the class for any throttle answer, also one that is not the envelope (the rule the relay uses too)', async () => {
    const waits: number[] = [];
    const limiter = createRateLimiter(
      { list: 100, other: 100 },
      { now: () => 0, setTimeout: (_fn, ms) => waits.push(ms), clearTimeout: () => undefined },
    );
    const gatewayPage: typeof fetch = async () =>
      new Response('<html>slow down</html>', { status: 429, headers: { 'retry-after': '3' } });
    const transport = createTransport({ baseUrl: 'http://127.0.0.1:9', fetch: gatewayPage, limiter, timeoutMs: 2000 });
    await expect(
      transport.request({ path: '/v2/shop/coupons', cls: 'list', priority: 'background' }),
    ).rejects.toMatchObject({ code: 'bad_response' });
    void limiter.acquire('list', 'background').catch(() => undefined);
    expect(waits.at(-1)).toBe(3000);
    limiter.dispose();
  });

  it('reads a valid envelope even when it comes with the wrong content type', async () => {
    const client = await clientFor();
    mock!.inject('wrong-content-type', { path: '/v2/shop/coupons' });
    expect((await client.listCoupons(1)).records).toHaveLength(100);
  });

  it('times out a request that hangs', async () => {
    mock = await startMock();
    const transport = createTransport({
      baseUrl: mock.url,
      fetch,
      limiter: createRateLimiter(false),
      timeoutMs: 200,
      auth: { key: KEY, secret: SECRET },
    });
    const client = createApiClient({ transport });
    await client.getCoupon('WELCOME10'); // token first
    mock.inject('hang', { path: '/v2/shop/coupons' });
    await expect(client.getCoupon('WELCOME10')).rejects.toMatchObject({
      code: 'timeout',
      message: expect.stringMatching(/did not answer within 0.2 s/),
    });
  });

  it('refuses a product number that is not a whole number before sending anything', async () => {
    const client = await clientFor();
    await expect(client.listProductOptions(1.5, 1)).rejects.toMatchObject({ code: 'bad_request' });
    await expect(client.getProductOptionByNo(13805, -1)).rejects.toMatchObject({ code: 'bad_request' });
    expect(mock!.requests.filter((r) => r.path.startsWith('/v2/shop'))).toHaveLength(0);
  });
});
