// What an engine with credentials sends: only the shop API's own paths (the auth path and the six read paths),
// through every entry point. It talks to the API by definition, so it never asks for a relay (`/relay/v1`), which
// the real API does not have and would count against the shop's rate limit on every start.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '@shop-lookup/mock-server';
import { matchAllowedPath } from '../../relay/src/door/allowedPaths';
import type { ShopAuth, ShopLookup } from '../src';
import { KEY, lookupFor, next, SECRET, startMock } from './utils';

/** Tracked: synced with the coupons. */
const PRODUCT = 13805;
/** Not tracked: its options are read through one by one. */
const UNTRACKED = 13802;

/** A fetch that records the path and query of every request the engine sends, whatever answers it. */
function recordingFetch() {
  const sent: string[] = [];
  const fn: typeof fetch = (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    sent.push(`${url.pathname}${url.search}`);
    return fetch(input, init);
  };
  return { fn, sent };
}

/** The API's own paths: `/v2/auth`, and the six GET paths (the same list the credential proxy forwards). */
const isApiPath = (pathAndQuery: string) => {
  const path = pathAndQuery.split('?')[0]!;
  return path === '/v2/auth' || matchAllowedPath(pathAndQuery).ok;
};

/** Every entry point of the public object, once, against data the mock has. */
async function useEverything(lookup: ShopLookup, mock: MockShopApi) {
  expect((await lookup.sync()).ok).toBe(true);
  await lookup.trackProducts([13801]);
  await next(lookup.coupons(), (r) => r.data.length > 0 && !r.fetching);
  await next(lookup.coupon(MOCK_CODES.welcomeCoupon), (r) => r.data !== null && !r.fetching);
  await next(lookup.issuedCoupon(MOCK_CODES.issuedUnused), (r) => r.data !== null && !r.fetching);
  await next(lookup.coupon('NO-SUCH-COUPON'), (r) => r.syncedAt !== null && !r.fetching);
  await next(lookup.productOptions(PRODUCT), (r) => r.data.length > 0 && !r.fetching);
  const [byNo, byCode] = mock.data.products.get(UNTRACKED)!;
  await next(lookup.productOptionByNo(UNTRACKED, Number(byNo!.no)), (r) => r.data !== null && !r.fetching);
  await next(lookup.productOptionByCode(UNTRACKED, String(byCode!.code)), (r) => r.data !== null && !r.fetching);
  expect(await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000 })).toMatchObject({
    ok: true,
    source: 'network',
  });
  expect((await lookup.prefetchIssuedCoupons([MOCK_CODES.issuedUsed])).ok).toBe(true);
}

describe('requests an engine with credentials sends', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup | null = null;
  beforeEach(async () => {
    mock = await startMock();
  });
  afterEach(async () => {
    await lookup?.close();
    lookup = null;
    await mock.close();
  });

  const token = async () => {
    const res = await fetch(`${mock.url}/v2/auth?key=${KEY}&secret=${SECRET}`);
    return ((await res.json()) as { access_token: string }).access_token;
  };

  for (const [mode, auth] of [
    ['{ key, secret }', async (): Promise<ShopAuth> => ({ key: KEY, secret: SECRET })],
    ['{ accessToken }', async (): Promise<ShopAuth> => ({ accessToken: await token() })],
  ] as const) {
    it(`are only the API's own paths with ${mode}, through sync, the six lookups, validateCoupon and prefetch`, async () => {
      const recorder = recordingFetch();
      lookup = lookupFor(mock, { auth: await auth(), fetch: recorder.fn, products: [PRODUCT] });
      await useEverything(lookup, mock);
      expect(recorder.sent.filter((p) => !isApiPath(p))).toEqual([]);
      // and every entry point did reach the API (the check above is not about an engine that sent nothing)
      const paths = recorder.sent.map((p) => p.split('?')[0]!);
      for (const expected of [
        '/v2/shop/coupons',
        `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`,
        '/v2/shop/coupons/NO-SUCH-COUPON',
        `/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`,
        `/v2/shop/issue-coupons/${MOCK_CODES.issuedUsed}`,
        `/v2/shop/products/${PRODUCT}/options`,
        '/v2/shop/products/13801/options',
      ]) {
        expect(paths, expected).toContain(expected);
      }
      // an untracked product's options, one by number and one by code
      expect(
        paths.filter((p) => /^\/v2\/shop\/products\/13802\/options\/[^/]+$/.test(p)).length,
      ).toBeGreaterThanOrEqual(2);
      // a token is fetched only with key and secret
      expect(paths.includes('/v2/auth')).toBe(mode === '{ key, secret }');
      const s = await next(lookup.status(), (x) => x.source !== undefined);
      expect(s.source).toBe('direct');
    });
  }

  it('still asks once whether baseUrl is a relay without credentials (a page behind a proxy or a relay)', async () => {
    const recorder = recordingFetch();
    lookup = lookupFor(mock, { auth: undefined, fetch: recorder.fn });
    await lookup.sync();
    expect(recorder.sent.filter((p) => p.startsWith('/relay/v1'))).toEqual(['/relay/v1']);
  });
});
