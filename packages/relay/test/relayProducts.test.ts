// What a client can make the relay list (issue 25, item 12): POST relay/v1/products only as JSON (a web page cannot
// send it cross-site without a preflight), a product tracked only once the API confirmed it exists, a capped set
// per shop (409 beyond), and products no till asked for in productTtlMs dropped (the host's own stay).
import { describe, expect, it, vi } from 'vitest';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import { relaysPerTest, type RelayFixture } from '@shop-lookup/test-kit/relayUtils';

const { relayWith } = relaysPerTest();
const JSON_TYPE = { 'content-type': 'application/json' };
const first = MOCK_CODES.firstProductNo;

const post = (f: RelayFixture, products: unknown[], headers: Record<string, string> = JSON_TYPE) =>
  f.get('/relay/v1/products', { method: 'POST', body: JSON.stringify({ products }), headers });
const optionCalls = (f: RelayFixture, no: number) =>
  f.api.requests.filter((r) => r.path === `/v2/shop/products/${no}/options`);
const tracked = async (f: RelayFixture) => (await f.get('/relay/v1/products')).body!;

describe('relay products', () => {
  it.each([
    ['text/plain (what a cross-site form or fetch may send without a preflight)', 'text/plain;charset=UTF-8'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['no content type', ''],
  ])('refuses a body sent as %s with 415 and tracks nothing', async (_what, type) => {
    const f = await relayWith({}, {}, { listed: true });
    const before = f.api.requests.length;
    const answer = await post(f, [first], type === '' ? {} : { 'content-type': type });
    expect(answer).toMatchObject({ status: 415, body: { code: 'unsupported_media_type' } });
    expect(await tracked(f)).toEqual({ products: [], pending: [] });
    expect(f.api.requests.length).toBe(before);
  });

  it('tracks only the numbers the API confirmed, and never lists a made-up one', async () => {
    const f = await relayWith({}, {}, { listed: true });
    const madeUp = [990_001, 990_002, 990_003];
    const answer = await post(f, [first + 1, ...madeUp]);
    expect(answer).toMatchObject({ status: 202, body: { products: [], pending: [first + 1, ...madeUp] } });
    await expect.poll(async () => (await tracked(f)).pending).toEqual([]);
    expect(await tracked(f)).toEqual({ products: [first + 1], pending: [] });
    await expect.poll(async () => (await f.relay.status()).confirmedAt[`options:${first + 1}`]).toBeGreaterThan(0);
    // each made-up number cost one look at its first option: it is neither listed nor sent to tills
    for (const no of madeUp) expect(optionCalls(f, no).map((r) => [r.query.limit, r.code])).toEqual([['1', -11]]);
    await f.relay.refresh();
    for (const no of madeUp) expect(optionCalls(f, no)).toHaveLength(1);
    const feed = await f.get('/relay/v1/feed');
    expect(feed.body!.products).toEqual([first + 1]);
    // a number asked for again while it is tracked is not checked again
    expect(await post(f, [first + 1])).toMatchObject({ status: 200, body: { products: [first + 1], pending: [] } });
    expect(optionCalls(f, first + 1).filter((r) => r.query.limit === '1')).toHaveLength(1);
  });

  it('refuses a deeply nested body with 400 in words, never a 500 with a stack', async () => {
    const f = await relayWith({}, {}, { listed: true });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // 30,000 arrays deep in 60 kB: within the size bound; JSON.parse reads it, writing it back overflows the stack
      const deep = `{"products":[${'['.repeat(30_000)}${']'.repeat(30_000)}]}`;
      const answer = await f.get('/relay/v1/products', { method: 'POST', body: deep, headers: JSON_TYPE });
      expect(answer).toMatchObject({
        status: 400,
        body: {
          message: expect.stringMatching(
            /products\[0\] must be a product number \(a whole number >= 1\), got an array/,
          ),
        },
      });
      const nestedObject = `{"products":[1,${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}]}`;
      expect(
        await f.get('/relay/v1/products', { method: 'POST', body: nestedObject, headers: JSON_TYPE }),
      ).toMatchObject({ status: 400 });
      expect(errors).not.toHaveBeenCalled();
      expect(await tracked(f)).toEqual({ products: [], pending: [] });
    } finally {
      errors.mockRestore();
    }
  });

  it('caps the products a shop tracks: a POST that would pass the cap gets 409 and tracks none of them', async () => {
    const f = await relayWith({ maxTrackedProducts: 3, products: [first] }, {}, { listed: true });
    const before = f.api.requests.length;
    const refused = await post(f, [first + 1, first + 2, first + 3]);
    expect(refused).toMatchObject({
      status: 409,
      body: { code: 'too_many_products', message: expect.stringMatching(/at most 3 \(maxTrackedProducts\)/) },
    });
    expect(f.api.requests.length).toBe(before);
    expect(await post(f, [first + 1, first + 2])).toMatchObject({ status: 202 });
    await expect.poll(async () => (await tracked(f)).products).toEqual([first, first + 1, first + 2]);
    expect(await post(f, [first + 4])).toMatchObject({ status: 409, body: { code: 'too_many_products' } });
    expect((await tracked(f)).products).toEqual([first, first + 1, first + 2]);
  });

  it('drops a product no till asked for within productTtlMs, and keeps the host`s own and those asked for again', async () => {
    let clock = Date.now();
    const f = await relayWith({ now: () => clock, productTtlMs: 60_000, products: [first] }, {}, { listed: true });
    await post(f, [first + 1, first + 2]);
    await expect.poll(async () => (await tracked(f)).products).toEqual([first, first + 1, first + 2]);
    clock += 40_000;
    expect(await post(f, [first + 2])).toMatchObject({ status: 200 }); // asked for again: its time starts anew
    clock += 40_000;
    await f.relay.refresh();
    expect(await tracked(f)).toEqual({ products: [first, first + 2], pending: [] });
    const listed = optionCalls(f, first + 1).length;
    await f.relay.refresh();
    expect(optionCalls(f, first + 1)).toHaveLength(listed); // no longer listed
    expect((await f.get('/relay/v1/feed')).body!.products).toEqual([first, first + 2]);
    clock += 80_000;
    await f.relay.refresh();
    expect((await tracked(f)).products).toEqual([first]);
  });
});
