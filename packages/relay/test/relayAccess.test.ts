// Who may ask the relay, and what a client that floods it, or sends garbage, gets: 401 until the host decides,
// authorize per route (the README's storefront and till recipes), 429 per client, clear JSON errors for bad input
// with nothing changed, nosniff everywhere, long-polls bounded by their wait and by close().
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import type { Authorize, RouteName } from '../src';
import { relaysPerTest } from '@shop-lookup/test-kit/relayUtils';

const { relayWith } = relaysPerTest();

const product = MOCK_CODES.firstProductNo;
/** One GET per route name (`uses` is POST only: packages/relay/test/relayUses.test.ts). */
const ROUTES: Record<Exclude<RouteName, 'uses'>, string> = {
  coupons: '/v2/shop/coupons',
  coupon: `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`,
  issuedCoupon: `/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`,
  productOptions: `/v2/shop/products/${product}/options`,
  productOption: `/v2/shop/products/${MOCK_CODES.ambiguousProductNo}/options/${MOCK_CODES.optionNo12}`,
  discovery: '/relay/v1',
  feed: '/relay/v1/feed',
  products: '/relay/v1/products',
  status: '/relay/v1/status',
};

// The README's recipes, as written there. A storefront: product options and one coupon by its exact code.
const storefront: Authorize = (_req, route) => ['productOptions', 'productOption', 'coupon'].includes(route);
// A till: the session cookie it got when it signed in opens every route, the feed included.
const tillSessions = new Set(['till-1-session']); // your sign-in route adds to this
const TILL_COOKIE = /(?:^|;\s*)till_session=([^;]+)/;
const tillSession = (req: IncomingMessage) => TILL_COOKIE.exec(req.headers.cookie ?? '')?.[1];
const till: Authorize = (req) =>
  tillSessions.has(tillSession(req) ?? '') || { status: 401, message: 'Sign this till in first.' };

describe('relay access', () => {
  it('answers 401 to everything, saying how to open it, when neither authorize nor public is given', async () => {
    const f = await relayWith({ public: false });
    for (const [name, path] of Object.entries(ROUTES)) {
      const answer = await f.get(path);
      expect(answer.status, name).toBe(401);
      expect(answer.text, name).toMatch(/authorize.*public: true/);
      expect(answer.headers.get('x-content-type-options'), name).toBe('nosniff');
    }
    // nothing reached the API on behalf of a client (only the relay's own listing)
    expect(f.api.requests.filter((r) => /options\/|coupons\/|issue-coupons/.test(r.path))).toEqual([]);
  });

  it("lets a storefront ask for product options and one coupon, and refuses it the coupon list, issued coupons and the relay's own routes", async () => {
    const f = await relayWith({ public: false, authorize: storefront });
    // discovery too: a client allowed any route learns which ones (relayAudience.test.ts)
    const allowed: RouteName[] = ['productOptions', 'productOption', 'coupon', 'discovery'];
    for (const [name, path] of Object.entries(ROUTES) as [RouteName, string][]) {
      const answer = await f.get(path);
      if (allowed.includes(name)) expect(answer.status, name).toBe(200);
      else expect(answer.status, name).toBe(403);
    }
    expect(f.api.requests.some((r) => r.path.startsWith('/v2/shop/issue-coupons'))).toBe(false);
  });

  it('lets a till with its session cookie ask everything and answers a till without it 401 in its own words', async () => {
    const f = await relayWith({ public: false, authorize: till });
    for (const [name, path] of Object.entries(ROUTES)) {
      expect((await f.get(path, { headers: { cookie: 'lang=ko; till_session=till-1-session' } })).status, name).toBe(
        200,
      );
      const refused = await f.get(path, { headers: { cookie: 'till_session=guessed' } });
      expect(refused.status, name).toBe(401);
      expect(refused.text).toContain('Sign this till in first.');
    }
  });

  it('counts refused requests per client and answers 429 past the bound without asking authorize, while other clients are asked', async () => {
    const asked: string[] = [];
    const f = await relayWith({
      public: false,
      clientId: (req) => String(req.headers['x-client']),
      clientLimits: { refusedPerMinute: 3 },
      authorize: (req) => {
        asked.push(String(req.headers['x-client']));
        return req.headers['x-token'] === 'the-right-one' || { status: 401, message: 'Sign this till in first.' };
      },
    });
    const guess = (client: string, token: string) =>
      f.get('/relay/v1/status', { headers: { 'x-client': client, 'x-token': token } });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await guess('guesser', `guess-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    // past the bound authorize is not even asked: guessing costs nothing but a 429
    expect(asked.filter((c) => c === 'guesser')).toHaveLength(3);
    const limited = await guess('guesser', 'the-right-one');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({
      code: 'too_many_requests',
      message: expect.stringMatching(/refused too often/),
    });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(15); // a try every 20 s at 3 a minute
    expect((await guess('till', 'the-right-one')).status).toBe(200);
    expect((await guess('other-till', 'wrong')).status).toBe(401);
  });

  it('answers one client 429 with Retry-After once its queue is full, while another client is still served', async () => {
    const f = await relayWith({
      clientId: (req) => String(req.headers['x-client']),
      clientLimits: { concurrent: 1, queued: 1, perSecond: 1_000, burst: 1_000 },
    });
    const path = `/v2/shop/coupons/${MOCK_CODES.fixedCoupon}`;
    const hold = f.api.hold({ path });
    const a = { headers: { 'x-client': 'a' } };
    const running = f.get(path, a); // held at the API: client a's one slot is taken
    await expect.poll(() => f.api.requests.filter((r) => r.path === path).length).toBe(1);
    // two more from a: one waits in its queue (it cannot be answered before the held request ends), one is refused
    const more = [f.get('/relay/v1', a), f.get('/relay/v1/status', a)];
    const refused = await Promise.race(more);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({ code: 'too_many_requests' });
    const apiRefused = await f.get(`/v2/shop/products/${product}/options`, a);
    expect(apiRefused).toMatchObject({ status: 429, body: { code: -7 } });
    // another client is not held up by a's backlog
    expect((await f.get('/relay/v1', { headers: { 'x-client': 'b' } })).status).toBe(200);
    hold.release();
    expect((await running).status).toBe(200);
    expect((await Promise.all(more)).map((m) => m.status).sort()).toEqual([200, 429]);
  });

  it('answers 429 once a client spends its per-second budget', async () => {
    const f = await relayWith({ clientLimits: { perSecond: 0.001, burst: 3 } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await f.get('/relay/v1')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('answers 429 to a request that waited its longest in its client queue instead of parking it', async () => {
    const f = await relayWith({ clientLimits: { concurrent: 1, queued: 5, maxWaitMs: 100 } });
    const path = `/v2/shop/coupons/${MOCK_CODES.expiredCoupon}`;
    const hold = f.api.hold({ path });
    const running = f.get(path);
    await expect.poll(() => f.api.requests.filter((r) => r.path === path).length).toBe(1);
    const waited = await f.get('/relay/v1');
    expect(waited.status).toBe(429);
    expect(waited.body!.message).toMatch(/waited 100 ms/);
    hold.release();
    expect((await running).status).toBe(200);
  });

  it.each([
    ['a garbage since', '/relay/v1/feed?since=abc&handle=h', 400, 'bad_request'],
    ['a negative since', '/relay/v1/feed?since=-1&handle=h', 400, 'bad_request'],
    ['since without its handle', '/relay/v1/feed?since=3', 400, 'bad_request'],
    ['a garbage cursor', '/relay/v1/feed?cursor=%%%&handle=h', 400, 'bad_request'],
    [
      'a forged cursor',
      `/relay/v1/feed?cursor=${Buffer.from('[1,2]').toString('base64url')}&handle=h`,
      400,
      'bad_request',
    ],
    ['a wait over 60 s', '/relay/v1/feed?since=0&handle=h&wait=61', 400, 'bad_request'],
    ['a huge wait', '/relay/v1/feed?since=0&handle=h&wait=99999999999', 400, 'bad_request'],
    ['a limit of 0', '/relay/v1/feed?limit=0', 400, 'bad_request'],
    ['a limit over 10,000', '/relay/v1/feed?limit=10001', 400, 'bad_request'],
    ['since twice', '/relay/v1/feed?since=1&since=2&handle=h', 400, 'bad_request'],
    ['an unknown relay path', '/relay/v1/admin', 404, 'not_found'],
    ['an unknown relay version', '/relay/v2/feed', 404, 'not_found'],
  ])('answers %s with a clear JSON error', async (_what, path, status, code) => {
    const f = await relayWith();
    await f.relay.refresh();
    const before = await f.relay.status();
    const answer = await f.get(path);
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ code });
    expect(answer.body!.message).toMatch(/\w{3,}/);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await f.relay.status()).toEqual(before);
  });

  it.each([
    ['DELETE', '/relay/v1/feed', 405],
    ['POST', '/relay/v1/feed', 405],
    ['PUT', '/relay/v1/products', 405],
    ['POST', '/v2/shop/coupons', 405],
    ['GET', '/v2/auth', 404],
    ['GET', '/v2/member/members', 404],
  ])('refuses %s %s with %i and changes nothing', async (method, path, status) => {
    const f = await relayWith();
    await f.relay.refresh();
    const before = await f.relay.status();
    const requests = f.api.requests.length;
    const answer = await f.get(path, { method, body: method === 'GET' ? undefined : '{"products":[1]}' });
    expect(answer.status).toBe(status);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await f.relay.status()).toEqual(before);
    expect(f.api.requests.length).toBe(requests);
  });

  it.each([
    ['not JSON', 'products=1'],
    ['no products array', '{"items":[1]}'],
    ['a product number that is not a whole number', '{"products":[1.5]}'],
    ['a product number as text', '{"products":["13801"]}'],
  ])('answers POST products with %s 400 and tracks nothing', async (_what, body) => {
    const f = await relayWith();
    const answer = await f.get('/relay/v1/products', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'bad_request' });
    expect((await f.get('/relay/v1/products')).body).toEqual({ products: [], pending: [] });
  });

  it('answers a URL longer than maxUrlLength 414, on the feed and on the API paths', async () => {
    const f = await relayWith({ maxUrlLength: 200 });
    const feed = await f.get(`/relay/v1/feed?limit=1&x=${'a'.repeat(300)}`);
    expect(feed).toMatchObject({ status: 414, body: { code: 'uri_too_long' } });
    const api = await f.get(`/v2/shop/coupons/${'A'.repeat(300)}`);
    expect(api).toMatchObject({ status: 414, body: { code: -10 } });
  });

  it('ends a long-poll when its wait is over, and every parked long-poll when the relay closes', async () => {
    const f = await relayWith();
    await f.relay.refresh();
    const snap = await f.snapshot();
    const short = await f.get(`/relay/v1/feed?since=${snap.version}&handle=${snap.handle}&wait=1`, {
      headers: { 'if-none-match': snap.etag },
    });
    expect(short.status).toBe(304);
    const long = f.get(`/relay/v1/feed?since=${snap.version}&handle=${snap.handle}&wait=60`, {
      headers: { 'if-none-match': snap.etag },
    });
    await expect.poll(async () => (await f.relay.status()).waiting).toBe(1);
    await f.relay.close();
    expect((await long).status).toBe(304);
  });

  it('never passes an upstream HTML page on as HTML', async () => {
    const f = await relayWith();
    const path = `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`;
    f.api.inject('html', { path });
    const answer = await f.get(path);
    expect(answer.status).toBe(502);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.body).toMatchObject({ code: -19 });
    expect(answer.text).not.toMatch(/<html/i);
  });
});
