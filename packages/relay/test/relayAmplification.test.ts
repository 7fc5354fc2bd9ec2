// No amplification from anonymous clients: a storefront cannot add products to the shop-wide tracked set, and a
// thousand shoppers reading one untracked product at once make one upstream call (the relay's single-flight).
import { describe, expect, it } from 'vitest';
import type { Authorize } from '../src';
import { relaysPerTest } from '@shop-lookup/test-kit/relayUtils';

const UNTRACKED = 13803;
const storefront: Authorize = (_req, route) => ['productOptions', 'productOption', 'coupon'].includes(route);
/** Each request names its shopper (a test stands in for a thousand addresses behind a trusted balancer). */
const shopperId = (req: { headers: Record<string, string | string[] | undefined> }) => String(req.headers['x-shopper']);

describe('relayAmplification', () => {
  const { relayWith } = relaysPerTest();

  it('refuses a storefront client the tracked set: its POST adds nothing', async () => {
    const f = await relayWith({ public: false, authorize: storefront }, {}, { listed: true });
    const before = (await f.relay.status()).products;
    const post = await f.get('/relay/v1/products', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ products: [UNTRACKED] }),
    });
    expect(post.status).toBe(403);
    expect(post.body).toMatchObject({ refusal: { code: 'forbidden', route: 'products' } });
    expect((await f.relay.status()).products).toEqual(before);
    expect(f.api.requests.filter((r) => r.path.startsWith(`/v2/shop/products/${UNTRACKED}`))).toEqual([]);
  });

  it('answers 1,000 concurrent anonymous reads of one untracked product with one upstream call', async () => {
    const f = await relayWith(
      { public: false, authorize: storefront, clientId: shopperId, itemCacheMs: 60_000 },
      {},
      { listed: true },
    );
    const path = `/v2/shop/products/${UNTRACKED}/options`;
    const hold = f.api.hold({ path });
    const reads = Array.from({ length: 1000 }, (_, i) => f.get(path, { headers: { 'x-shopper': `shopper-${i}` } }));
    await hold.arrived; // the first read is upstream and held there while the others arrive
    hold.release();
    const answers = await Promise.all(reads);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers[0]!.body!.data.list.length).toBeGreaterThan(0);
    expect(f.api.requests.filter((r) => r.path === path)).toHaveLength(1);
    // and the product was not added to the shop-wide set by being read
    expect((await f.relay.status()).products).not.toContain(UNTRACKED);
  });
});
