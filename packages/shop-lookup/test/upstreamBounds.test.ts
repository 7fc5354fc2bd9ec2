// Every upstream answer is read within a byte bound, counted decoded (issue 33, item 2): a list page 8 MiB, a single
// item 1 MiB, /v2/auth 64 KiB by default, `maxAnswerBytes` for a relay or proxy that needs more. Against a real
// upstream on 127.0.0.1 that answers 64 MiB, a gzip bomb (1 MB inflating to 1 GiB) or an answer that never ends:
// the exchange stops at the bound (or the timeout, which covers the body), the relay command stays up with its
// memory bounded and answers 502 marked `bad_response`, which the engine reports as such; the proxy passes nothing
// longer either.
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { ANSWER_BOUNDS, createExchange } from '@shop-lookup/shop-api';
import { createShopApiProxy, createShopRelay } from '@shop-lookup/relay';
import { gzipBomb, longAnswer, serve, startHostileUpstream, trickle, type Misbehaviour } from './hostileUpstream';
import { startRelayBin } from '@shop-lookup/test-kit/relayBin';
import type { Json } from '@shop-lookup/test-kit/relayUtils';
import { KEY, lookupFor, next, SECRET } from './utils';
import type { ShopLookup } from '../src';

const MiB = 1024 * 1024;
const ITEM = '/v2/shop/coupons';
const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The path of a request, without its query. */
const pathOf = (req: IncomingMessage): string => req.url!.split('?')[0]!;

/** Items `LONG`, `BOMB` and `SLOW` misbehave; `more` may take other requests; the rest is the mock API's. */
async function upstreamWith(more: Misbehaviour = () => false) {
  const mock: MockShopApi = await startMockShopApi({ rateLimits: false, key: KEY, secret: SECRET });
  const upstream = await startHostileUpstream(mock.url, (req, res, body) => {
    const path = pathOf(req);
    if (path === `${ITEM}/LONG`) return longAnswer(res, 64 * MiB);
    if (path === `${ITEM}/BOMB`) return gzipBomb(res);
    if (path === `${ITEM}/SLOW`) return trickle(res);
    return more(req, res, body);
  });
  closing.push(
    () => mock.close(),
    () => upstream.close(),
  );
  return { mock, upstream };
}

async function served(handler: Parameters<typeof serve>[0]): Promise<string> {
  const server = await serve(handler);
  closing.push(() => server.close());
  return server.url;
}

async function getJson(url: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Json };
}

/**
 * fetch whose answers count the bytes read out of them (decoded) into `pulled`, and fail past `guard`: what the
 * test itself lets a read inflate, so a read without a bound fails here instead of filling this process.
 */
function countingFetch(guard: number) {
  const pulled = { bytes: 0 };
  const fn: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!res.body) return res;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          pulled.bytes += chunk.byteLength;
          if (pulled.bytes > guard) throw new Error(`the test's guard: more than ${guard} bytes read`);
          controller.enqueue(chunk);
        },
      }),
    );
    // keep what the exchange reads of the answer (status, type, headers) with the counted body
    return Object.assign(new Response(counted, { status: res.status, headers: res.headers }), {});
  };
  return { fn, pulled };
}

describe('the exchange', () => {
  it('drops an answer past its bound, long or a gzip bomb, having read no more than the bound (decoded)', async () => {
    const { upstream } = await upstreamWith();
    for (const path of [`${ITEM}/LONG`, `${ITEM}/BOMB`]) {
      const { fn, pulled } = countingFetch(64 * MiB);
      const send = createExchange({ baseUrl: upstream.url, fetch: fn, timeoutMs: 60_000 });
      expect([path, await send({ path, maxBytes: MiB })]).toEqual([
        path,
        { kind: 'too_big', status: 200, maxBytes: MiB },
      ]);
      // stopped at the chunk that passed the bound: the bomb was not inflated further
      expect(pulled.bytes, path).toBeGreaterThan(MiB);
      expect(pulled.bytes, path).toBeLessThan(2 * MiB);
    }
  });

  it('times out an answer that never ends (the timeout covers the body), and reads one within its bound whole', async () => {
    const { upstream } = await upstreamWith();
    const send = createExchange({ baseUrl: upstream.url, fetch, timeoutMs: 300 });
    expect(await send({ path: `${ITEM}/SLOW`, maxBytes: MiB })).toEqual({ kind: 'timeout' });
    const patient = createExchange({ baseUrl: upstream.url, fetch, timeoutMs: 60_000 });
    const auth = await patient({
      method: 'POST',
      path: '/v2/auth',
      body: { key: KEY, secret: SECRET },
      maxBytes: ANSWER_BOUNDS.auth,
    });
    expect(auth).toMatchObject({ kind: 'answer', status: 200, text: expect.stringContaining('access_token') });
  });
});

describe('the relay command', () => {
  let till: ShopLookup | undefined;
  afterEach(async () => {
    await till?.close();
    till = undefined;
  });

  it('stays up with its memory bounded, answers a long item and a gzip bomb 502 bad_response naming the bound', async () => {
    const { upstream } = await upstreamWith();
    const relay = await startRelayBin({
      SHOP_API_KEY: KEY,
      SHOP_API_SECRET: SECRET,
      SHOP_API_TARGET: upstream.url,
      SHOP_ID: 'bounded-shop',
      RELAY_PUBLIC: 'true',
    });
    closing.push(() => relay.kill());
    for (const code of ['BOMB', 'LONG', 'BOMB']) {
      const answer = await getJson(`${relay.url}${ITEM}/${code}`);
      expect([code, answer.status, answer.body]).toEqual([
        code,
        502,
        {
          code: -19,
          data: null,
          msg: expect.stringMatching(
            /^BAD GATEWAY: the shop API's answer was longer than 1 MiB, the most this relay reads of such an answer/,
          ),
          failure: { code: 'bad_response', maxBytes: MiB },
        },
      ]);
    }
    // an engine reading through the relay (once it has listed the shop) says what it was, not "offline"
    await expect
      .poll(async () => (await getJson(`${relay.url}/relay/v1/feed?limit=1`)).status, { timeout: 30_000 })
      .toBe(200);
    till = lookupFor({ url: relay.url }, { auth: undefined, shopId: 'bounded-shop' });
    expect((await till.sync()).ok).toBe(true);
    const bomb = await next(till.coupon('BOMB'), (r) => r.error !== null);
    expect(bomb.error).toMatchObject({
      code: 'bad_response',
      message: expect.stringMatching(/longer than 1 MiB .*dropped unread by the shop's relay or proxy/),
    });
    expect(bomb.offline).toBe(false);
    // still up, still serving, and it never held anything near the bomb's 1 GiB (the peak of its resident memory)
    expect(relay.alive()).toBe(true);
    expect((await getJson(`${relay.url}${ITEM}/${MOCK_CODES.welcomeCoupon}`)).status).toBe(200);
    const peak = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${relay.pid}/status`, 'utf8'))![1]) * 1024;
    expect(peak).toBeLessThan(400 * MiB);
  }, 60_000);
});

describe('the relay and the proxy in process', () => {
  it("answers a list page past the relay's own bound as bad_response in its listing, naming the bound", async () => {
    const { upstream } = await upstreamWith((req, res) => pathOf(req) === ITEM && longAnswer(res, 64 * MiB));
    const relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: upstream.url,
      public: true,
      rateLimits: false,
      retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    });
    closing.push(() => relay.close());
    await relay.ready;
    await relay.refresh();
    expect((await relay.status()).error).toMatch(
      /bad_response: the shop API's answer was longer than 8 MiB, the bound of such an answer, and was dropped unread/,
    );
  });

  it('passes nothing longer than its bound: the proxy answers 502 bad_response, with maxAnswerBytes as set', async () => {
    const { upstream } = await upstreamWith();
    const proxy = createShopApiProxy({
      key: KEY,
      secret: SECRET,
      target: upstream.url,
      public: true,
      rateLimits: false,
      maxAnswerBytes: { list: 16 * 1024 },
    });
    closing.push(async () => proxy.close());
    const origin = await served((req, res) => proxy(req, res));
    const bomb = await getJson(`${origin}${ITEM}/BOMB`);
    expect(bomb).toMatchObject({ status: 502, body: { failure: { code: 'bad_response', maxBytes: MiB } } });
    // an ordinary list page of 100 coupons is longer than the 16 KiB this proxy was given
    const page = await getJson(`${origin}${ITEM}?offset=1&limit=100`);
    expect(page).toMatchObject({
      status: 502,
      body: {
        msg: expect.stringMatching(/longer than 16 KiB, the most this proxy reads/),
        failure: { maxBytes: 16 * 1024 },
      },
    });
    expect((await getJson(`${origin}${ITEM}?offset=1&limit=5`)).status).toBe(200);
  });

  it('answers an upstream that never ends 504 once its timeout ran out', async () => {
    const { upstream } = await upstreamWith();
    const relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: upstream.url,
      public: true,
      rateLimits: false,
      timeoutMs: 300,
    });
    closing.push(() => relay.close());
    const origin = await served((req, res) => relay(req, res));
    const slow = await getJson(`${origin}${ITEM}/SLOW`);
    expect(slow).toMatchObject({
      status: 504,
      body: { msg: expect.stringMatching(/^GATEWAY TIMEOUT: the shop API at .* did not answer within 300 ms/) },
    });
  });
});

describe('an engine with credentials', () => {
  let lookup: ShopLookup | undefined;
  afterEach(async () => {
    await lookup?.close();
    lookup = undefined;
  });

  it('reports a list page past 8 MiB as bad_response naming the bound, and a never-ending item as a timeout', async () => {
    const { upstream } = await upstreamWith((req, res) => {
      if (pathOf(req) === ITEM) return longAnswer(res, 64 * MiB);
      return pathOf(req) === '/v2/shop/issue-coupons/SLOW' && trickle(res);
    });
    // the bound, not the timeout, ends the long page: a busy machine may take seconds to read 8 MiB
    lookup = lookupFor({ url: upstream.url }, { requestTimeoutMs: 60_000 });
    const report = await lookup.sync();
    expect(report.errors[0]).toMatchObject({
      code: 'bad_response',
      message: expect.stringMatching(/longer than 8 MiB \(the bound of such an answer\)/),
    });
    await lookup.close();
    lookup = lookupFor({ url: upstream.url }, { requestTimeoutMs: 300 });
    const slow = await lookup.prefetchIssuedCoupons(['SLOW']);
    expect(slow.errors[0]).toMatchObject({ code: 'timeout' });
  });
});
