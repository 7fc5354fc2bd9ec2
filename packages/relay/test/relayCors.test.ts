// The relay's cross-origin answers (`cors`): for the origins it is given, every answer readable (refusals and the
// feed's 304 included), the preflight of the routes tills use (the feed's long-poll: Authorization, If-None-Match),
// the headers a till reads exposed (ETag, Retry-After, X-Shop-Relay-Degraded, Date); `*` only on the routes opened
// to any origin, never with credentials; no CORS header for other origins; Vary: Origin on every answer. The hub
// passes the option to its shops and answers its own refusals the same way.
import { request, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import { createRelayHub, createShopRelay, type Authorize, type RelayHub } from '../src';
import { KEY, listen, relaysPerTest, SECRET, type RelayFixture } from '@shop-lookup/test-kit/relayUtils';

const { relayWith, track } = relaysPerTest();

const TILL_PAGE = 'https://till.example';
const OTHER_PAGE = 'https://elsewhere.example';
const GOOD = 'Bearer good-till-token';
const FEED = '/shop-api/relay/v1/feed';
const OPTIONS_PATH = `/shop-api/v2/shop/products/${MOCK_CODES.firstProductNo}/options`;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request with exactly these headers (Origin included, which fetch would not let us set as a page does). */
function ask(origin: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, { method, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const till: Authorize = (req, route) =>
  route === 'productOptions' ||
  req.headers.authorization === GOOD || { status: 401, message: 'UNAUTHORIZED: sign this till in' };

/** What a page reads of an answer: its CORS headers. */
const corsOf = (a: Answer) => ({
  origin: a.headers['access-control-allow-origin'],
  credentials: a.headers['access-control-allow-credentials'],
  exposed: a.headers['access-control-expose-headers'],
  // (other headers may vary the answer too, such as Accept-Encoding: Origin must be among them)
  varyOrigin: (a.headers.vary ?? '').split(/\s*,\s*/).includes('Origin'),
});

/** Never `*` with credentials, on any answer. */
const expectNoWildcardCredentials = (answers: Answer[]) => {
  for (const a of answers)
    if (a.headers['access-control-allow-origin'] === '*')
      expect(a.headers['access-control-allow-credentials']).toBeUndefined();
};

const corsRelay = (): Promise<RelayFixture> =>
  relayWith(
    { public: false, authorize: till, cors: { origins: [TILL_PAGE], anyOriginRoutes: ['productOptions'] } },
    {},
    { listed: true },
  );

describe('the relay across origins (cors)', () => {
  it("answers a listed origin's requests readable: its origin back with credentials, the headers a till reads exposed, refusals and 304s too", async () => {
    const f = await corsRelay();
    const seen: Answer[] = [];
    const feed = await ask(f.origin, 'GET', `${FEED}?limit=5`, { origin: TILL_PAGE, authorization: GOOD });
    seen.push(feed);
    expect(feed.status).toBe(200);
    expect(corsOf(feed)).toEqual({
      origin: TILL_PAGE,
      credentials: 'true',
      exposed: 'ETag, Retry-After, X-Shop-Relay-Degraded, Date',
      varyOrigin: true,
    });
    const etag = feed.headers.etag!;
    const snapshot = JSON.parse(feed.body) as { version: number; handle: string };

    // the long-poll's 304 (nothing changed within its wait), a refusal, a path the relay does not serve
    const unchanged = await ask(f.origin, 'GET', `${FEED}?since=${snapshot.version}&handle=${snapshot.handle}&wait=0`, {
      origin: TILL_PAGE,
      authorization: GOOD,
      'if-none-match': etag,
    });
    const refused = await ask(f.origin, 'GET', FEED, { origin: TILL_PAGE, authorization: 'Bearer wrong' });
    const missing = await ask(f.origin, 'GET', '/shop-api/relay/v1/nothing', {
      origin: TILL_PAGE,
      authorization: GOOD,
    });
    seen.push(unchanged, refused, missing);
    expect([unchanged.status, refused.status, missing.status]).toEqual([304, 401, 404]);
    for (const a of [unchanged, refused, missing])
      expect(corsOf(a)).toMatchObject({ origin: TILL_PAGE, credentials: 'true', varyOrigin: true });
    expect(JSON.parse(refused.body)).toMatchObject({ refusal: { route: 'feed', by: 'relay' } });
    expectNoWildcardCredentials(seen);
  });

  it("answers the preflight of the feed's long-poll, the products POST and an API path for a listed origin, before authorize is asked", async () => {
    let asked = 0;
    const f = await relayWith(
      {
        public: false,
        authorize: (req, route) => (asked++, till(req, route)),
        cors: { origins: [TILL_PAGE] },
        clientLimits: { refusedPerMinute: 1 },
      },
      {},
      { listed: true },
    );
    const preflight = (path: string, method: string, headers: string) =>
      ask(f.origin, 'OPTIONS', path, {
        origin: TILL_PAGE,
        'access-control-request-method': method,
        'access-control-request-headers': headers,
      });
    const poll = await preflight(`${FEED}?since=3&wait=30`, 'GET', 'authorization,if-none-match');
    expect(poll.status).toBe(204);
    expect(poll.body).toBe('');
    expect(poll.headers).toMatchObject({
      'access-control-allow-origin': TILL_PAGE,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET',
      'access-control-allow-headers': 'Authorization, Content-Type, If-None-Match',
      'access-control-max-age': '600',
    });
    expect(corsOf(poll).varyOrigin).toBe(true);
    expect(
      (await preflight('/shop-api/relay/v1/products', 'POST', 'authorization,content-type')).headers[
        'access-control-allow-methods'
      ],
    ).toBe('GET, POST');
    expect(
      (await preflight('/shop-api/v2/shop/coupons', 'GET', 'authorization')).headers['access-control-allow-methods'],
    ).toBe('GET');
    // a preflight carries no credentials: it is answered without authorize and is no refusal (none counted)
    expect(asked).toBe(0);
    expect((await ask(f.origin, 'GET', FEED, { origin: TILL_PAGE, authorization: GOOD })).status).toBe(200);
    // OPTIONS that is no preflight is another method, as before
    expect((await ask(f.origin, 'OPTIONS', FEED, { authorization: GOOD })).status).toBe(405);
  });

  it('lets a listed origin read a path it does not serve, outside its mount too: the preflight answered, the 404 readable', async () => {
    const f = await corsRelay();
    for (const path of ['/shop-apii/relay/v1', '/relay/v1', '/shop-api/relay/v9']) {
      const preflight = await ask(f.origin, 'OPTIONS', path, {
        origin: TILL_PAGE,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers, path).toMatchObject({
        'access-control-allow-origin': TILL_PAGE,
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'Authorization, Content-Type, If-None-Match',
      });
      const missing = await ask(f.origin, 'GET', path, { origin: TILL_PAGE, authorization: GOOD });
      expect(missing.status, path).toBe(404);
      expect(corsOf(missing), path).toMatchObject({ origin: TILL_PAGE, credentials: 'true', varyOrigin: true });
      // another origin still reads nothing there
      const other = await ask(f.origin, 'GET', path, { origin: OTHER_PAGE });
      expect(other.headers['access-control-allow-origin'], path).toBeUndefined();
    }
  });

  it('tells onUnlistedOrigin the origin of every request and preflight of a page not listed, never of its own origin', async () => {
    const told: string[] = [];
    const f = await relayWith(
      {
        public: false,
        authorize: till,
        cors: { origins: [TILL_PAGE], anyOriginRoutes: ['productOptions'], onUnlistedOrigin: (o) => told.push(o) },
      },
      {},
      { listed: true },
    );
    await ask(f.origin, 'OPTIONS', FEED, { origin: OTHER_PAGE, 'access-control-request-method': 'GET' });
    await ask(f.origin, 'GET', FEED, { origin: OTHER_PAGE, authorization: GOOD });
    await ask(f.origin, 'GET', '/elsewhere', { origin: 'null' });
    expect(told).toEqual([OTHER_PAGE, OTHER_PAGE, 'null']);
    // a listed page, the routes open to any page, and a page of the relay's own origin are no news
    await ask(f.origin, 'GET', FEED, { origin: TILL_PAGE, authorization: GOOD });
    await ask(f.origin, 'GET', OPTIONS_PATH, { origin: OTHER_PAGE });
    await ask(f.origin, 'GET', FEED, { origin: f.origin, authorization: GOOD });
    await ask(f.origin, 'GET', FEED, { origin: 'https://relay.example', 'sec-fetch-site': 'same-origin' });
    await ask(f.origin, 'GET', FEED, { authorization: GOOD });
    expect(told).toHaveLength(3);
  });

  it('gives any other origin no CORS header (its page cannot read the answer), and Vary: Origin all the same', async () => {
    const f = await corsRelay();
    const feed = await ask(f.origin, 'GET', FEED, { origin: OTHER_PAGE, authorization: GOOD });
    const preflight = await ask(f.origin, 'OPTIONS', FEED, {
      origin: OTHER_PAGE,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
    });
    const noOrigin = await ask(f.origin, 'GET', FEED, { authorization: GOOD });
    for (const a of [feed, preflight, noOrigin]) {
      expect(Object.keys(a.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
      expect(corsOf(a).varyOrigin).toBe(true);
    }
    expect(preflight.status).toBe(204);
  });

  it('opens the routes given as anyOriginRoutes to any origin with `*` and no credentials, and only those', async () => {
    const f = await corsRelay();
    const options = await ask(f.origin, 'GET', OPTIONS_PATH, { origin: OTHER_PAGE });
    expect(options.status).toBe(200);
    expect(corsOf(options)).toEqual({
      origin: '*',
      credentials: undefined,
      exposed: 'ETag, Retry-After, X-Shop-Relay-Degraded, Date',
      varyOrigin: true,
    });
    const preflight = await ask(f.origin, 'OPTIONS', OPTIONS_PATH, {
      origin: OTHER_PAGE,
      'access-control-request-method': 'GET',
    });
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET',
    });
    // a listed origin gets itself back there too; the feed stays closed to other origins
    const listed = await ask(f.origin, 'GET', OPTIONS_PATH, { origin: TILL_PAGE });
    expect(corsOf(listed)).toMatchObject({ origin: TILL_PAGE, credentials: 'true' });
    const feed = await ask(f.origin, 'GET', FEED, { origin: OTHER_PAGE, authorization: GOOD });
    expect(feed.headers['access-control-allow-origin']).toBeUndefined();
    expectNoWildcardCredentials([options, preflight, listed, feed]);
  });

  it('sends no CORS header and no Vary: Origin without the option; OPTIONS stays a method it does not answer', async () => {
    const f = await relayWith({ public: false, authorize: till }, {}, { listed: true });
    const feed = await ask(f.origin, 'GET', FEED, { origin: TILL_PAGE, authorization: GOOD });
    const preflight = await ask(f.origin, 'OPTIONS', FEED, {
      origin: TILL_PAGE,
      'access-control-request-method': 'GET',
    });
    expect(Object.keys(feed.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    expect(corsOf(feed).varyOrigin).toBe(false);
    expect(preflight.status).toBe(405);
  });

  it('refuses origins that are not origins, a wildcard, and unknown route names, naming the option', () => {
    const options = { key: KEY, secret: SECRET, public: true };
    for (const origins of [['https://till.example/'], ['*'], ['till.example'], ['https://Till.example']]) {
      expect(() => createShopRelay({ ...options, cors: { origins } })).toThrow(
        /option "cors\.origins" must be an array of origins such as 'https:\/\/till\.example'/,
      );
    }
    expect(() =>
      createShopRelay({ ...options, cors: { origins: [], anyOriginRoutes: ['everything' as 'feed'] } }),
    ).toThrow(/option "cors\.anyOriginRoutes" must be an array of route names/);
    expect(() => createShopRelay({ ...options, cors: { origins: [TILL_PAGE], credentials: true } as never })).toThrow(
      /unknown option in "cors": "credentials"/,
    );
  });
});

describe('the relay hub across origins', () => {
  let hub: RelayHub | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    await hub?.close();
  });

  it('passes cors to its shops (their preflights answered) and answers its own refusals readable for a listed origin', async () => {
    const f = track(await relayWith({}, {}, {}));
    hub = createRelayHub({
      credentials: (shopId) => (shopId === 'shop-a' ? { key: KEY, secret: SECRET, target: f.api.url } : null),
      authorize: (req) => req.headers.authorization === GOOD,
      rateLimits: false,
      cors: { origins: [TILL_PAGE] },
      observer: { log: () => undefined },
    });
    const server = await listen((req, res) => hub!(req, res));
    close = async () => {
      server.server.closeAllConnections();
      await new Promise<void>((resolve) => server.server.close(() => resolve()));
    };
    const preflight = await ask(server.origin, 'OPTIONS', '/shops/shop-a/relay/v1/feed', {
      origin: TILL_PAGE,
      'access-control-request-method': 'GET',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': TILL_PAGE,
      'access-control-allow-methods': 'GET',
    });
    expect(corsOf(preflight).varyOrigin).toBe(true);
    // answered before the hub hears the request: the same for a shop it does not serve (no shop told apart)
    const nobody = await ask(server.origin, 'OPTIONS', '/shops/nobody/v2/shop/coupons/WELCOME10', {
      origin: TILL_PAGE,
      'access-control-request-method': 'GET',
    });
    expect(nobody.status).toBe(204);
    expect(nobody.headers).toMatchObject({
      'access-control-allow-origin': TILL_PAGE,
      'access-control-allow-methods': 'GET',
    });
    const unknown = await ask(server.origin, 'GET', '/shops/nobody/relay/v1/feed', {
      origin: TILL_PAGE,
      authorization: GOOD,
    });
    expect(unknown.status).toBe(404);
    expect(corsOf(unknown)).toMatchObject({ origin: TILL_PAGE, credentials: 'true', varyOrigin: true });
    const other = await ask(server.origin, 'GET', '/shops/nobody/relay/v1/feed', { origin: OTHER_PAGE });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    // a path outside /shops (a baseUrl without the shop's path): its preflight answered and its 404 readable
    const outside = await ask(server.origin, 'OPTIONS', '/relay/v1', {
      origin: TILL_PAGE,
      'access-control-request-method': 'GET',
    });
    expect(outside.status).toBe(204);
    expect(outside.headers['access-control-allow-origin']).toBe(TILL_PAGE);
    const notServed = await ask(server.origin, 'GET', '/relay/v1', { origin: TILL_PAGE, authorization: GOOD });
    expect(notServed.status).toBe(404);
    expect(corsOf(notServed)).toMatchObject({ origin: TILL_PAGE, credentials: 'true' });
  });
});
