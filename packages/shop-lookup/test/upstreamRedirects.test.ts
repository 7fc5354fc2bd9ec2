// No shop-API request follows a redirect (issue 33, item 1): the engine, the relay (its listing, its single items,
// its /v2/auth) and the proxy, against a real upstream on 127.0.0.1 whose list call answers 302, or whose /v2/auth
// answers 307, to a second server that records what reaches it. Nothing does: no token, no key, no secret. The
// redirect is an upstream error that names its status, never where it pointed.
import { afterEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createExchange } from '@shop-lookup/shop-api';
import { createShopApiProxy, createShopRelay, type ShopRelay } from '@shop-lookup/relay';
import { redirect, serve, startHostileUpstream, startRecorder, type TestServer } from './hostileUpstream';
import type { Json } from '@shop-lookup/test-kit/relayUtils';
import { KEY, lookupFor, SECRET } from './utils';
import type { ShopLookup } from '../src';

const LIST = '/v2/shop/coupons';
const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/**
 * The mock API, a recorder, and the hostile upstream in front of the mock that sends `which` requests to the
 * recorder.
 */
async function setup(which: 'list' | 'auth' | 'item') {
  const mock: MockShopApi = await startMockShopApi({ rateLimits: false, key: KEY, secret: SECRET });
  const thief = await startRecorder();
  // where the redirect points: another origin, with a query an error message must not repeat
  const elsewhere = `${thief.url}/collect?secret-marker=q7x`;
  const upstream: TestServer = await startHostileUpstream(mock.url, (req, res) => {
    const path = req.url!.split('?')[0]!;
    if (which === 'list' && path === LIST) return redirect(res, 302, elsewhere);
    if (which === 'item' && path.startsWith(`${LIST}/`)) return redirect(res, 302, elsewhere);
    if (which === 'auth' && path === '/v2/auth') return redirect(res, 307, elsewhere);
    return false;
  });
  closing.push(
    () => mock.close(),
    () => thief.close(),
    () => upstream.close(),
  );
  return { mock, thief, upstream, elsewhere };
}

/** Nothing in `text` tells where the redirect pointed. */
function namesNoLocation(text: string, thief: TestServer): void {
  expect(text).not.toContain(thief.url.replace('http://', ''));
  expect(text).not.toContain('secret-marker');
  expect(text).not.toContain('collect');
}

async function served(handler: Parameters<typeof serve>[0]): Promise<string> {
  const server = await serve(handler);
  closing.push(() => server.close());
  return server.url;
}

describe('the exchange', () => {
  it("takes a browser's opaque redirect (status 0) as a redirect, reading nothing of it", async () => {
    let read = false;
    const opaque = {
      type: 'opaqueredirect',
      status: 0,
      headers: new Headers(),
      get body() {
        read = true;
        return null;
      },
      text: async () => ((read = true), ''),
    } as unknown as Response;
    const inits: RequestInit[] = [];
    const send = createExchange({
      baseUrl: 'https://api.example',
      fetch: async (_url, init) => (inits.push(init!), opaque),
      timeoutMs: 1000,
    });
    expect(await send({ path: LIST, token: 'tok', maxBytes: 1024 })).toEqual({ kind: 'redirect', status: 0 });
    expect(inits.map((i) => i.redirect)).toEqual(['manual']);
    expect(read).toBe(false);
  });
});

describe('an engine with credentials', () => {
  let lookup: ShopLookup | undefined;
  afterEach(async () => {
    await lookup?.close();
    lookup = undefined;
  });

  it('does not follow a 302 on a list call: the token stays, the sync says which status came', async () => {
    const { thief, upstream } = await setup('list');
    lookup = lookupFor({ url: upstream.url });
    const report = await lookup.sync();
    expect(thief.received).toEqual([]);
    expect(report.ok).toBe(false);
    expect(report.errors[0]).toMatchObject({
      code: 'api_error',
      status: 302,
      message: expect.stringMatching(/a redirect \(HTTP 302\), which is never followed/),
    });
    namesNoLocation(JSON.stringify(report), thief);
  });

  it('does not follow a 307 on /v2/auth: the key and the secret stay', async () => {
    const { thief, upstream } = await setup('auth');
    lookup = lookupFor({ url: upstream.url });
    const report = await lookup.sync();
    expect(thief.received).toEqual([]);
    expect(report.errors[0]).toMatchObject({ code: 'api_error', status: 307 });
    namesNoLocation(JSON.stringify(report), thief);
  });
});

describe('the relay', () => {
  async function relayOn(
    target: string,
  ): Promise<{ relay: ShopRelay; get(path: string): Promise<{ status: number; body: Json }> }> {
    const relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target,
      public: true,
      rateLimits: false,
      retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    });
    closing.push(() => relay.close());
    const origin = await served((req, res) => relay(req, res));
    const get = async (path: string) => {
      const res = await fetch(`${origin}${path}`);
      return { status: res.status, body: (await res.json()) as Json };
    };
    return { relay, get };
  }

  it('does not follow a 302 on its listing nor on a single item: its token stays, its status names the status', async () => {
    const { thief, upstream } = await setup('list');
    const { relay } = await relayOn(upstream.url);
    await relay.ready;
    await relay.refresh();
    const status = JSON.stringify(await relay.status());
    expect(status).toMatch(/api_error: the shop API answered with a redirect, which is never followed.*\(HTTP 302\)/);
    namesNoLocation(status, thief);
    expect(thief.received).toEqual([]);
  });

  it('answers a single item redirected upstream 502 in its own words, sending nothing there', async () => {
    const { thief, upstream } = await setup('item');
    const { get } = await relayOn(upstream.url);
    const answer = await get(`${LIST}/${MOCK_CODES.welcomeCoupon}`);
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({
      code: -19,
      msg: expect.stringMatching(/answered with a redirect \(HTTP 302\), which this relay never follows/),
    });
    namesNoLocation(JSON.stringify(answer.body), thief);
    expect(thief.received).toEqual([]);
  });

  it('does not follow a 307 on /v2/auth, for its listing or a single item: the key and the secret stay', async () => {
    const { thief, upstream } = await setup('auth');
    const { relay, get } = await relayOn(upstream.url);
    await relay.ready;
    await relay.refresh();
    expect(JSON.stringify(await relay.status())).toMatch(/redirect.*\(HTTP 307\)/);
    const answer = await get(`${LIST}/${MOCK_CODES.welcomeCoupon}`);
    expect(answer).toMatchObject({ status: 502, body: { msg: expect.stringMatching(/redirect \(HTTP 307\)/) } });
    expect(thief.received).toEqual([]);
  });
});

describe('the proxy', () => {
  it('does not follow a 302 on a list call nor a 307 on /v2/auth', async () => {
    for (const which of ['list', 'auth'] as const) {
      const { thief, upstream } = await setup(which);
      const proxy = createShopApiProxy({
        key: KEY,
        secret: SECRET,
        target: upstream.url,
        public: true,
        rateLimits: false,
      });
      closing.push(async () => proxy.close());
      const origin = await served((req, res) => proxy(req, res));
      const res = await fetch(`${origin}${LIST}?offset=1&limit=10`);
      const body = (await res.json()) as Json;
      expect([which, res.status, body.msg]).toEqual([
        which,
        502,
        expect.stringMatching(/redirect \(HTTP 30[27]\), which this proxy never follows/),
      ]);
      namesNoLocation(JSON.stringify(body), thief);
      expect(thief.received).toEqual([]);
    }
  });
});

describe('a till on a relay, with its token', () => {
  it("follows no redirect of the relay's discovery or feed: its token stays, the sync names the status", async () => {
    const mock: MockShopApi = await startMockShopApi({ rateLimits: false, key: KEY, secret: SECRET });
    const thief = await startRecorder();
    const relay = createShopRelay({ key: KEY, secret: SECRET, target: mock.url, public: true, rateLimits: false });
    closing.push(
      () => mock.close(),
      () => thief.close(),
      () => relay.close(),
    );
    await relay.ready;
    await relay.refresh();
    const elsewhere = `${thief.url}/collect?secret-marker=q7x`;
    for (const redirected of ['/relay/v1', '/relay/v1/feed']) {
      // the relay as a till reaches it, but for the one path that answers with a redirect
      const origin = await served((req, res) => {
        if (req.url!.split('?')[0] === redirected) return void redirect(res, 302, elsewhere);
        relay(req, res);
      });
      const till = lookupFor(
        { url: origin },
        {
          auth: undefined,
          token: 'till-token-front-1-0a1b2c3d4e5f',
          source: redirected === '/relay/v1' ? 'auto' : 'relay',
        },
      );
      closing.push(() => till.close());
      const report = await till.sync();
      expect(thief.received, redirected).toEqual([]);
      expect(report.ok, redirected).toBe(false);
      expect(report.errors[0], redirected).toMatchObject({ code: 'api_error', status: 302 });
      namesNoLocation(JSON.stringify(report), thief);
    }
  });
});
