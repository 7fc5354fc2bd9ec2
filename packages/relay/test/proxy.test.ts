import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, startMockShopApi, type MockShopApi, type MockShopApiOptions } from '@shop-lookup/mock-server';
import { createShopApiProxy, type ShopApiProxy, type ShopApiProxyOptions } from '../src';

type Json = Record<string, any>;

const KEY = 'demo-key';
const SECRET = 'demo-secret';

/** Every secret and every token the proxies were given, and every response any test saw. */
const secrets = new Set<string>([SECRET]);
const seen: { where: string; headers: string; text: string }[] = [];

function expectNoSecrets(where: string, headers: string, text: string): void {
  seen.push({ where, headers, text });
  for (const secret of secrets) {
    expect(headers, `headers of ${where}`).not.toContain(secret);
    expect(text, `body of ${where}`).not.toContain(secret);
  }
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Json | undefined;
}

function parse(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

interface UpstreamCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  signal: AbortSignal | undefined;
}

/** The real fetch, recording what the proxy sends upstream and the tokens /v2/auth hands it. */
function recordingFetch(calls: UpstreamCall[], inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const url = String(input);
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    calls.push({ url, method: init?.method ?? 'GET', headers, signal: init?.signal ?? undefined });
    const res = await inner(input, init);
    if (url.endsWith('/v2/auth')) {
      const body = parse(await res.clone().text());
      const token = body?.access_token ?? body?.data?.access_token;
      if (typeof token === 'string') secrets.add(token);
    }
    return res;
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler);
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

interface SetupOptions {
  mock?: MockShopApiOptions;
  proxy?: Partial<ShopApiProxyOptions>;
  /** Mount as connect middleware: paths the proxy passes on are answered 'next:<url>'. */
  withNext?: boolean;
}

async function setup({ mock = {}, proxy: proxyOptions = {}, withNext = false }: SetupOptions = {}) {
  const api: MockShopApi = await startMockShopApi({ rateLimits: false, ...mock });
  cleanups.push(() => api.close());
  const calls: UpstreamCall[] = [];
  if (proxyOptions.secret) secrets.add(proxyOptions.secret);
  const proxy: ShopApiProxy = createShopApiProxy({
    key: KEY,
    secret: SECRET,
    target: api.url,
    rateLimits: false,
    public: true,
    ...proxyOptions,
    fetch: recordingFetch(calls, proxyOptions.fetch),
  });
  cleanups.push(() => proxy.close());
  const url = await listen((req, res) =>
    withNext ? proxy(req, res, () => res.end(`next:${req.url}`)) : proxy(req, res),
  );

  /** A request with Node's fetch (which normalises the URL like a browser). */
  async function get(path: string, init: RequestInit = {}): Promise<Answer> {
    const res = await fetch(`${url}${path}`, init);
    const text = await res.text();
    expectNoSecrets(`${init.method ?? 'GET'} ${path}`, [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n'), text);
    return { status: res.status, headers: res.headers, text, body: parse(text) };
  }

  /** A request whose path is sent exactly as written (fetch would resolve '..' and '%2e'). */
  function raw(path: string, method = 'GET'): Promise<{ status: number; body: Json | undefined }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${url}/`, { path, method, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          expectNoSecrets(`${method} ${path}`, res.rawHeaders.join('\n'), text);
          resolve({ status: res.statusCode ?? 0, body: parse(text) });
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  const dataCalls = () => api.requests.filter((r) => r.path !== '/v2/auth');
  const authCalls = () => api.requests.filter((r) => r.path === '/v2/auth');
  return { api, proxy, calls, url, get, raw, dataCalls, authCalls };
}

const enc = encodeURIComponent;

describe('createShopApiProxy', () => {
  it('forwards each served shape and answers with the API data', async () => {
    const { api, get, dataCalls } = await setup();
    const list = await get('/v2/shop/coupons?offset=1&limit=100');
    expect(list.status).toBe(200);
    expect(list.body?.data.list).toHaveLength(100);
    expect(list.body?.data.list[0].coupon_code).toBe(api.data.coupons[0]?.coupon_code);

    const coupon = await get(`/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`);
    expect(coupon.body?.data.coupon_code).toBe(MOCK_CODES.welcomeCoupon);
    const issued = await get(`/v2/shop/issue-coupons/${MOCK_CODES.issuedUsed}`);
    expect(issued.body?.data).toMatchObject({ coupon_issue_code: MOCK_CODES.issuedUsed, status: 'complete' });

    const product = MOCK_CODES.ambiguousProductNo;
    const options = await get(`/v2/shop/products/${product}/options`);
    expect(options.body?.data.list.map((o: Json) => o.no)).toEqual([3, 12, 14]);
    const byNo = await get(`/v2/shop/products/${product}/options/${MOCK_CODES.optionNo12}`);
    expect(byNo.body?.data).toMatchObject({ no: 12, code: MOCK_CODES.optionNo12Code });
    const byCode = await get(`/v2/shop/products/${product}/options/MEMO`);
    expect(byCode.body?.data).toMatchObject({ no: 14, code: 'MEMO' });

    expect(dataCalls().map((r) => [r.rawPath, r.status])).toEqual([
      ['/v2/shop/coupons', 200],
      [`/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`, 200],
      [`/v2/shop/issue-coupons/${MOCK_CODES.issuedUsed}`, 200],
      [`/v2/shop/products/${product}/options`, 200],
      [`/v2/shop/products/${product}/options/12`, 200],
      [`/v2/shop/products/${product}/options/MEMO`, 200],
    ]);
  });

  it('answers with the upstream status, body and content-type but no other upstream headers', async () => {
    const { get } = await setup();
    const missing = await get('/v2/shop/coupons/NO-SUCH-COUPON');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: -11, data: null });
    expect(missing.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(missing.headers.get('cache-control')).toBe('no-store');
    // the mock sends CORS headers; a same-origin proxy passes none of them on
    expect(missing.headers.get('access-control-allow-origin')).toBeNull();
    expect(missing.headers.get('set-cookie')).toBeNull();
  });

  it('never follows a redirect upstream (the token would travel along): it is answered as a bad gateway', async () => {
    const redirects: RequestInit['redirect'][] = [];
    const elsewhere: typeof fetch = async (input, init) => {
      redirects.push(init?.redirect);
      if (String(input).endsWith('/v2/auth')) return fetch(input, init);
      return new Response(null, { status: 302, headers: { location: 'http://127.0.0.1:9/steal' } });
    };
    const { get } = await setup({ proxy: { fetch: elsewhere } });
    const answer = await get('/v2/shop/coupons/WELCOME10');
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({
      code: -19,
      msg: expect.stringMatching(
        /^BAD GATEWAY: the shop API at .* answered with a redirect \(HTTP 302\), which this proxy never follows/,
      ),
    });
    expect(redirects).toEqual(['manual', 'manual']);
  });

  it('passes encoded coupon codes to the API byte for byte', async () => {
    const { get, dataCalls } = await setup();
    const codePath = `/v2/shop/coupons/${enc(MOCK_CODES.encodedCoupon)}`;
    expect(codePath).toContain('%2F10%25%3F%23%26');
    const coupon = await get(codePath);
    expect(coupon.status).toBe(200);
    expect(coupon.body?.data.coupon_code).toBe(MOCK_CODES.encodedCoupon);

    const issuedPath = `/v2/shop/issue-coupons/${enc(MOCK_CODES.issuedEncoded)}`;
    const issued = await get(issuedPath);
    expect(issued.body?.data.coupon_issue_code).toBe(MOCK_CODES.issuedEncoded);

    // lower-case escapes of plain letters are not re-encoded or normalised either
    const lower = await get('/v2/shop/coupons/WELCOME%31%30');
    expect(lower.body?.data.coupon_code).toBe('WELCOME10');
    expect(dataCalls().map((r) => r.rawPath)).toEqual([codePath, issuedPath, '/v2/shop/coupons/WELCOME%31%30']);
  });

  it('refuses /v2/auth and every other path with 404 without calling the API', async () => {
    const { api, calls, get } = await setup();
    const auth = await get(`/v2/auth?key=${KEY}&secret=${SECRET}`);
    expect(auth.status).toBe(404);
    expect(auth.body).toMatchObject({ code: -98, data: null });
    const postAuth = await get('/v2/auth', { method: 'POST', body: JSON.stringify({ key: KEY, secret: SECRET }) });
    expect(postAuth.status).toBe(404);
    for (const path of [
      `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}/issue-coupons`,
      '/v2/shop/products/13805',
      '/v2/shop/products/abc/options',
      '/v2/shop/coupons/WELCOME10/junk',
      '/v2/shop/couponsX',
      '/v2/shop/issue-coupons',
      '/v2/shop/products/13805/options/12/x',
      '/v2/member/members',
      '/v2',
    ]) {
      const answer = await get(path);
      expect([path, answer.status, answer.body?.code]).toEqual([path, 404, -98]);
    }
    expect(api.requests).toHaveLength(0);
    expect(calls).toHaveLength(0);
  });

  it('answers 405 with Allow: GET to every other method', async () => {
    const { api, get } = await setup();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) {
      const answer = await get('/v2/shop/coupons', { method });
      expect([method, answer.status, answer.headers.get('allow')]).toEqual([method, 405, 'GET']);
      if (method !== 'HEAD') expect(answer.body).toMatchObject({ code: -99, data: null });
    }
    expect(api.requests).toHaveLength(0);
  });

  it('refuses paths that could climb or confuse before they reach the API', async () => {
    const { api, calls, raw } = await setup();
    const unsafe = [
      '/v2/shop/coupons/..',
      '/v2/shop/coupons/../../v2/auth',
      '/v2/shop/coupons/.',
      '/v2/shop/coupons/%2e%2e',
      '/v2/shop/coupons/%2E%2E',
      '/v2/shop/coupons/%2E.',
      '/v2/shop/coupons/.%2e/%2e%2E/v2/auth',
      '/v2/shop/coupons/..%2F..%2Fauth',
      '/v2/shop/coupons/%252e%252e',
      '/v2/shop/coupons/%252E%252E%252Fauth',
      '/v2/shop/coupons/a%5cb',
      '/v2/shop/coupons/a%5Cb',
      '/v2/shop/coupons/a\\b',
      '/v2/shop/coupons/a%00b',
      '/v2/shop//coupons',
      '/v2/shop/coupons//WELCOME10',
      '/v2/shop/coupons/',
      '/v2/shop/coupons/%',
      '/v2/shop/coupons/%G1',
      '/v2/shop/coupons/%E',
      '/v2/shop/coupons/%FF',
      '/v2/shop/coupons/%C3%28',
      '/v2/shop/products/%31%33/options',
    ];
    for (const path of unsafe) {
      const answer = await raw(path);
      // a malformed path is a bad request (-10), one the proxy does not serve a missing service (-98)
      const expected = answer.status === 400 ? [400, -10] : [404, -98];
      expect([path, answer.status, answer.body?.code]).toEqual([path, ...expected]);
    }
    expect((await raw('/v2/shop/coupons/%2e%2e')).status).toBe(400);
    expect(api.requests).toHaveLength(0);
    expect(calls).toHaveLength(0);
  });

  it('answers 414 to a URL longer than maxUrlLength', async () => {
    const { api, get } = await setup();
    const long = await get(`/v2/shop/coupons/${'A'.repeat(2100)}`);
    expect(long.status).toBe(414);
    expect(long.body).toMatchObject({ code: -10, data: null });
    const { get: getShort } = await setup({ proxy: { maxUrlLength: 40 } });
    expect((await getShort('/v2/shop/coupons/WELCOME10')).status).toBe(200);
    expect((await getShort('/v2/shop/coupons/WELCOME10?limit=1&offset=22222222')).status).toBe(414);
    expect(api.requests).toHaveLength(0);
  });

  it('forwards only offset and limit on list paths and no query on single items', async () => {
    const { get, dataCalls } = await setup();
    await get('/v2/shop/coupons?offset=2&limit=5&foo=bar&access_token=x&key=demo-key');
    await get('/v2/shop/products/13805/options?limit=abc&offset=1&offset=3');
    await get('/v2/shop/coupons/WELCOME10?offset=2&limit=5');
    expect(dataCalls().map((r) => [r.rawPath, r.query])).toEqual([
      ['/v2/shop/coupons', { offset: '2', limit: '5' }],
      ['/v2/shop/products/13805/options', { offset: '1' }],
      ['/v2/shop/coupons/WELCOME10', {}],
    ]);
  });

  it("never forwards the client's access-token, cookie or authorization", async () => {
    const { calls, get } = await setup();
    const answer = await get('/v2/shop/coupons/WELCOME10', {
      headers: { 'access-token': 'client-token', cookie: 'session=abc', authorization: 'Bearer client' },
    });
    expect(answer.status).toBe(200);
    const data = calls.filter((c) => !c.url.endsWith('/v2/auth'));
    expect(data).toHaveLength(1);
    expect(Object.keys(data[0]!.headers).sort()).toEqual(['accept', 'access-token']);
    expect(data[0]!.headers['access-token']).not.toBe('client-token');
    expect(secrets.has(data[0]!.headers['access-token']!)).toBe(true);
  });

  it('shares one token request among concurrent requests', async () => {
    const { get, authCalls } = await setup();
    const answers = await Promise.all(
      ['WELCOME10', 'FIXED3000', 'APPONLY', 'EXPIRED2025'].map((c) => get(`/v2/shop/coupons/${c}`)),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(authCalls()).toHaveLength(1);
  });

  it('renews the token once when the API refuses it', async () => {
    const { api, get, dataCalls, authCalls } = await setup();
    expect((await get('/v2/shop/coupons/WELCOME10')).status).toBe(200);
    api.expireTokens();
    expect((await get('/v2/shop/coupons/FIXED3000')).status).toBe(200);
    expect(authCalls()).toHaveLength(2);
    expect(dataCalls().map((r) => [r.status, r.code])).toEqual([
      [200, 200],
      [401, -2],
      [200, 200],
    ]);

    // a token refused again after renewal is passed on, not renewed in a loop
    api.inject('expire-token', { path: '/v2/shop/coupons/APPONLY', times: Infinity });
    const refused = await get('/v2/shop/coupons/APPONLY');
    expect([refused.status, refused.body?.code]).toEqual([401, -2]);
    expect(authCalls()).toHaveLength(3);
    expect(dataCalls()).toHaveLength(5);
  });

  it('passes a bad key/secret on as -1 without echoing the auth answer', async () => {
    const { get } = await setup({ proxy: { secret: 'wrong-secret-value' } });
    const answer = await get('/v2/shop/coupons/WELCOME10');
    expect(answer.status).toBe(401);
    expect(Object.keys(answer.body ?? {}).sort()).toEqual(['code', 'data', 'msg']);
    expect(answer.body).toMatchObject({ code: -1, data: null });
    expect(answer.body?.msg).toContain('INVALID KEY OR SECRET');

    // an auth answer that echoes the secret and carries extra fields: only its code and (redacted) msg get through
    const echoing: typeof fetch = async () =>
      Response.json(
        {
          msg: 'INVALID KEY OR SECRET: wrong-secret-value',
          code: -1,
          debug: 'leak-marker',
          data: { seen: 'leak-marker' },
        },
        { status: 401, headers: { 'set-cookie': 'leak-marker=1', 'x-debug': 'leak-marker' } },
      );
    const { get: getEchoing } = await setup({ proxy: { secret: 'wrong-secret-value', fetch: echoing } });
    const echoed = await getEchoing('/v2/shop/coupons/WELCOME10');
    expect([echoed.status, echoed.body?.code, echoed.body?.data]).toEqual([401, -1, null]);
    expect(echoed.text).not.toContain('leak-marker');
    expect([...echoed.headers].join()).not.toContain('leak-marker');
  });

  it('reads a token from data.access_token too', async () => {
    const fake: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/v2/auth')) {
        return Response.json({ msg: 'SUCCESS', code: 200, data: { access_token: 'nested-token-4711' } });
      }
      const ok = new Headers(init?.headers).get('access-token') === 'nested-token-4711';
      return Response.json(
        { msg: ok ? 'SUCCESS' : 'INVALID ACCESS TOKEN', code: ok ? 200 : -2, data: { ok } },
        { status: ok ? 200 : 401 },
      );
    };
    const { get } = await setup({ proxy: { fetch: fake } });
    const answer = await get('/v2/shop/coupons/WELCOME10');
    expect([answer.status, answer.body?.data]).toEqual([200, { ok: true }]);
  });

  it('answers an upstream error in its own words, never with the text the API sent (which may echo the token)', async () => {
    const fake: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/v2/auth'))
        return Response.json({ msg: 'SUCCESS', code: 200, access_token: 'echoed-token-0815' });
      const token = new Headers(init?.headers).get('access-token');
      return Response.json({ msg: `INVALID ACCESS TOKEN: ${token}`, code: -2, data: { token } }, { status: 401 });
    };
    const { get } = await setup({ proxy: { fetch: fake } });
    const answer = await get('/v2/shop/coupons/WELCOME10');
    expect([answer.status, answer.body?.code, answer.body?.data]).toEqual([401, -2, null]);
    expect(answer.body?.msg).toMatch(/^INVALID ACCESS TOKEN: the shop API refused the access token of this server/);
    expect(answer.text).not.toContain('echoed-token');
  });

  it('answers 502 when the API cannot be reached', async () => {
    const { api, get } = await setup();
    expect((await get('/v2/shop/coupons/WELCOME10')).status).toBe(200);
    await api.close();
    const answer = await get('/v2/shop/coupons/WELCOME10');
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ code: -19, data: null });
    expect(answer.body?.msg).toMatch(/^BAD GATEWAY: .*could not be reached \(ECONNREFUSED\)/);
  });

  it('answers 504 when the API does not answer in time', async () => {
    const { api, get } = await setup({ proxy: { timeoutMs: 300 } });
    api.inject('hang', { path: '/v2/shop/coupons/WELCOME10' });
    const started = Date.now();
    const answer = await get('/v2/shop/coupons/WELCOME10');
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({ code: -19, data: null });
    expect(answer.body?.msg).toMatch(/^GATEWAY TIMEOUT: .*300 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('aborts the upstream request when the client disconnects', async () => {
    const { api, calls, url } = await setup();
    api.inject('hang', { path: '/v2/shop/coupons/WELCOME10' });
    const client = new AbortController();
    const pending = fetch(`${url}/v2/shop/coupons/WELCOME10`, { signal: client.signal }).catch((e: unknown) => e);
    await expect.poll(() => api.requests.some((r) => r.path === '/v2/shop/coupons/WELCOME10')).toBe(true);
    const upstream = calls.find((c) => c.url.endsWith('/WELCOME10'));
    expect(upstream?.signal?.aborted).toBe(false);
    client.abort();
    await pending;
    await expect.poll(() => upstream?.signal?.aborted, { timeout: 2000 }).toBe(true);
  });

  it('passes a throttle on and holds back that class for Retry-After', async () => {
    const { api, get, dataCalls } = await setup({ proxy: { rateLimits: undefined } });
    api.inject('throttle', { path: '/v2/shop/coupons/WELCOME10' });
    const throttled = await get('/v2/shop/coupons/WELCOME10');
    expect([throttled.status, throttled.body?.code, throttled.headers.get('retry-after')]).toEqual([429, -7, '1']);
    expect((await get('/v2/shop/coupons/FIXED3000')).status).toBe(200);
    const [first, second] = dataCalls();
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
  });

  it('keeps several terminals behind one proxy within the shop list limit together', async () => {
    const { get, dataCalls } = await setup({
      mock: { rateLimits: { list: 1, other: 5 } },
      proxy: { rateLimits: undefined },
    });
    // two terminals, three list requests at once, against a mock that throttles anything above 1 list call/s
    const terminalA = [get('/v2/shop/coupons?offset=1&limit=10'), get('/v2/shop/coupons?offset=2&limit=10')];
    const terminalB = [get('/v2/shop/products/13805/options')];
    const answers = await Promise.all([...terminalA, ...terminalB]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const lists = dataCalls();
    expect(lists).toHaveLength(3);
    expect(lists.filter((r) => r.throttled)).toHaveLength(0);
    const times = lists.map((r) => r.at).sort((a, b) => a - b);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(1000);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(1000);
  });

  it('mounts under a basePath as connect middleware and hands other paths to next', async () => {
    const { api, get } = await setup({ proxy: { basePath: '/shop-api/' }, withNext: true });
    const coupon = await get('/shop-api/v2/shop/coupons/WELCOME10');
    expect(coupon.body?.data.coupon_code).toBe('WELCOME10');
    expect(api.requests.at(-1)?.rawPath).toBe('/v2/shop/coupons/WELCOME10');
    expect((await get('/index.html')).text).toBe('next:/index.html');
    expect((await get('/shop-api-admin/x')).text).toBe('next:/shop-api-admin/x');
    expect((await get('/v2/shop/coupons/WELCOME10')).text).toBe('next:/v2/shop/coupons/WELCOME10');
    expect((await get('/shop-api/v2/auth')).status).toBe(404);
    expect((await get('/shop-api/other')).status).toBe(404);

    const { get: getBare } = await setup({ proxy: { basePath: '/shop-api' } });
    const outside = await getBare('/index.html');
    expect([outside.status, outside.body?.code]).toEqual([404, -98]);
  });

  it('answers 502 while switched down and recovers when switched back on', async () => {
    const { api, proxy, get } = await setup();
    proxy.setUpstreamDown(true);
    const down = await get('/v2/shop/coupons/WELCOME10');
    expect(down.status).toBe(502);
    expect(down.body).toMatchObject({ code: -19, data: null });
    expect(down.body?.msg).toMatch(/^BAD GATEWAY: /);
    expect((await get('/v2/auth')).status).toBe(404);
    expect((await get('/v2/shop/coupons', { method: 'POST' })).status).toBe(405);
    expect(api.requests).toHaveLength(0);
    proxy.setUpstreamDown(false);
    expect((await get('/v2/shop/coupons/WELCOME10')).status).toBe(200);
  });

  it('close() ends requests in flight with 502', async () => {
    const { api, proxy, url } = await setup();
    api.inject('hang', { path: '/v2/shop/coupons/WELCOME10' });
    const pending = fetch(`${url}/v2/shop/coupons/WELCOME10`);
    await expect.poll(() => api.requests.some((r) => r.path === '/v2/shop/coupons/WELCOME10')).toBe(true);
    proxy.close();
    const answer = await pending;
    const text = await answer.text();
    expectNoSecrets('close', '', text);
    expect([answer.status, parse(text)?.code]).toEqual([502, -19]);
  });

  it('never put the secret or a token in any response header or body', async () => {
    const { get } = await setup();
    await get('/v2/shop/coupons/WELCOME10');
    expect(secrets.size).toBeGreaterThan(1); // the secret and at least one token
    for (const { where, headers, text } of seen) {
      for (const secret of secrets) {
        expect(`${headers}\n${text}`, where).not.toContain(secret);
      }
    }
  });
});

describe('createShopApiProxy: who may ask (shared with the relay)', () => {
  it('answers 401 to everything, saying how to open it, when neither authorize nor public is given', async () => {
    const { get, dataCalls, authCalls } = await setup({ proxy: { public: undefined } });
    for (const path of ['/v2/shop/coupons', '/v2/shop/coupons/WELCOME10', '/v2/shop/products/13801/options']) {
      const answer = await get(path);
      expect(answer.status, path).toBe(401);
      expect(answer.body?.msg, path).toMatch(/authorize.*public: true/);
    }
    expect([dataCalls().length, authCalls().length]).toEqual([0, 0]);
  });

  it("asks authorize for each request with the route's name and answers 403 when it says no", async () => {
    const asked: string[] = [];
    const { get, dataCalls } = await setup({
      proxy: {
        public: undefined,
        authorize: async (req, route) => {
          asked.push(route);
          return req.headers['x-staff'] === 'yes';
        },
      },
    });
    expect((await get('/v2/shop/coupons/WELCOME10', { headers: { 'x-staff': 'yes' } })).status).toBe(200);
    const refused = await get('/v2/shop/issue-coupons/IC-0000-OPEN');
    expect([refused.status, refused.body?.code]).toEqual([403, -5]);
    expect(asked).toEqual(['coupon', 'issuedCoupon']);
    expect(dataCalls().map((c) => c.path)).toEqual(['/v2/shop/coupons/WELCOME10']);
  });

  it('answers 429 to a client past its refused requests without asking authorize again', async () => {
    let asked = 0;
    const { get } = await setup({
      proxy: { public: undefined, clientLimits: { refusedPerMinute: 2 }, authorize: () => (asked++, false) },
    });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get('/v2/shop/coupons/WELCOME10')).status);
    expect(statuses).toEqual([403, 403, 429, 429]);
    expect(asked).toBe(2);
    const limited = await get('/v2/shop/coupons/WELCOME10');
    expect(limited.body?.code).toBe(-7);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(25); // a try every 30 s at 2 a minute
  });

  it('sends nosniff with every answer and a JSON content type even when upstream labels JSON as HTML', async () => {
    const { api, get } = await setup();
    api.inject('wrong-content-type', { path: '/v2/shop/coupons/WELCOME10' });
    const answer = await get('/v2/shop/coupons/WELCOME10');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await get('/v2/nothing')).headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers an upstream HTML page as a JSON bad gateway, never as HTML', async () => {
    const { api, get } = await setup();
    api.inject('html', { path: '/v2/shop/coupons/WELCOME10' });
    const answer = await get('/v2/shop/coupons/WELCOME10');
    expect([answer.status, answer.body?.code]).toEqual([502, -19]);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.text).not.toMatch(/<html/i);
  });

  it("answers one client's burst 429 with Retry-After beyond its queue, while another client is served", async () => {
    const { api, get, dataCalls } = await setup({
      proxy: { clientId: (req) => String(req.headers['x-client']), clientLimits: { concurrent: 1, queued: 2 } },
    });
    const hold = api.hold({ path: '/v2/shop/coupons/WELCOME10' });
    const a = { headers: { 'x-client': 'a' } };
    const burst = Array.from({ length: 6 }, () => get('/v2/shop/coupons/WELCOME10', a));
    await expect.poll(() => dataCalls().length).toBe(1);
    // one running (held), two queued: the others are refused at once, before anything is released
    const first = await Promise.race(burst);
    expect([first.status, first.body?.code, first.headers.get('retry-after')]).toEqual([429, -7, '1']);
    expect((await get('/v2/shop/coupons/FIXED3000', { headers: { 'x-client': 'b' } })).status).toBe(200);
    hold.release();
    const statuses = (await Promise.all(burst)).map((s) => s.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });
});
