// What the relay tells and gives each client: its discovery answer lists the routes this very request may use,
// and the feed carries the coupon list only to a client that may list coupons (snapshot, since, 304, live).
import { describe, expect, it } from 'vitest';
import type { Authorize } from '@shop-lookup/relay';
import { BASE, relaysPerTest, type RelayFixture } from '@shop-lookup/test-kit/relayUtils';
import { confirmed, lookupFor, next } from './utils';

const PRODUCT = 13805;
const storefront: Authorize = (_req, route) => ['productOptions', 'productOption', 'coupon'].includes(route);
/** A client that may read the feed but not list coupons (nor issued coupons). */
const noCoupons: Authorize = (_req, route) => route !== 'coupons' && route !== 'issuedCoupon';

const resources = (body: any) => new Set<string>([...body.upserts, ...body.deletes].map((u: any) => u.resource));

/** A snapshot read through the feed as a client without the coupon list sees it. */
async function snapshotOf(f: RelayFixture) {
  let page = await f.get('/relay/v1/feed?limit=50');
  const first = page;
  const seen = new Set<string>();
  for (;;) {
    for (const r of resources(page.body)) seen.add(r);
    if (page.body!.cursor === null) break;
    page = await f.get(`/relay/v1/feed?cursor=${page.body!.cursor}&handle=${first.body!.handle}&limit=50`);
  }
  return { seen, first, last: page };
}

describe('relayAudience', () => {
  const { relayWith } = relaysPerTest();

  it('lists in its discovery answer the routes this request may use, and opens discovery to any client allowed one', async () => {
    const f = await relayWith({ public: false, authorize: storefront });
    const d = await f.get('/relay/v1');
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({
      relay: 'shop-lookup',
      protocol: 1,
      routes: ['coupon', 'productOptions', 'productOption', 'discovery'],
    });
    const till = await relayWith({ public: false, authorize: () => true });
    expect((await till.get('/relay/v1')).body!.routes).toEqual([
      'coupons',
      'coupon',
      'issuedCoupon',
      'productOptions',
      'productOption',
      'discovery',
      'feed',
      'products',
      'status',
      'uses',
    ]);
    const nobody = await relayWith({ public: false, authorize: () => false });
    expect((await nobody.get('/relay/v1')).status).toBe(403);
  });

  it('gives a client that may not list coupons a feed of the options only: snapshot, since, 304 and live', async () => {
    const f = await relayWith(
      { public: false, authorize: noCoupons, products: [PRODUCT] },
      { data: { coupons: 120 } },
      { listed: true },
    );
    const snap = await snapshotOf(f);
    expect([...snap.seen]).toEqual([`options:${PRODUCT}`]);
    expect(snap.first.body!.confirmedAt.coupons).toBeUndefined();
    expect(snap.first.body!.confirmedAt[`options:${PRODUCT}`]).toBeGreaterThan(0);

    // since: a coupon change and an option change; only the option reaches this client
    const options = f.api.data.products.get(PRODUCT)!;
    f.api.upsertCoupon({ ...f.api.data.coupons[3], name: 'renamed' });
    f.api.setProductOptions(PRODUCT, [{ ...options[0], name: 'Colour' }, ...options.slice(1)]);
    await f.relay.refresh();
    const version = snap.last.body!.version;
    const handle = snap.first.body!.handle;
    const changes = await f.get(`/relay/v1/feed?since=${version}&handle=${handle}`);
    expect(changes.status).toBe(200);
    expect([...resources(changes.body)]).toEqual([`options:${PRODUCT}`]);
    expect(changes.body!.upserts.map((u: any) => u.record.name)).toContain('Colour');
    expect(changes.body!.confirmedAt.coupons).toBeUndefined();
    const etag = changes.headers.get('etag')!;
    const again = await f.get(`/relay/v1/feed?since=${changes.body!.version}&handle=${handle}`, {
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);

    // live: a parked long-poll woken by a coupon change and an option change carries the option only
    const poll = f.get(`/relay/v1/feed?since=${changes.body!.version}&handle=${handle}&wait=30`, {
      headers: { 'if-none-match': etag },
    });
    await expect.poll(async () => (await f.relay.status()).waiting).toBe(1);
    f.api.upsertCoupon({ ...f.api.data.coupons[4], name: 'woken' });
    f.api.setProductOptions(PRODUCT, [{ ...options[0], name: 'Size' }, ...options.slice(1)]);
    await f.relay.refresh();
    const live = await poll;
    expect(live.status).toBe(200);
    expect(JSON.stringify(live.body)).not.toContain('woken');
    expect(resources(live.body).has('coupons')).toBe(false);

    // the same relay gives a till (that may list coupons) the coupons: the filter is per client
    const till = await relayWith({ authorize: () => true, public: false }, { data: { coupons: 5 } }, { listed: true });
    expect((await till.snapshot()).records.size).toBeGreaterThan(0);
    expect([...(await till.snapshot()).records.keys()].some((k) => k.startsWith('coupons/'))).toBe(true);
  });

  it("an engine (coupons: 'all') on a storefront relay adapts: it asks nothing the discovery answer leaves out", async () => {
    const f = await relayWith({ public: false, authorize: storefront, products: [PRODUCT] }, {}, { listed: true });
    const asked: string[] = [];
    const recording: typeof fetch = (input, init) => {
      asked.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname.slice(BASE.length)}`);
      return fetch(input, init);
    };
    const shop = lookupFor({ url: `${f.origin}${BASE}` }, { auth: undefined, products: [PRODUCT], fetch: recording });
    try {
      const report = await shop.sync();
      expect(report.ok).toBe(true);
      expect(report.skipped?.map((e) => e.code)).toEqual(['forbidden']);
      const options = await confirmed(shop.productOptions(PRODUCT));
      expect(options.data.length).toBe(f.api.data.products.get(PRODUCT)!.length);
      const status = await next(shop.status(), (s) => s.phase === 'idle');
      expect(status.refused?.[0]?.message).toMatch(/does not allow this client to list the coupons/);
      // a checkout of a code neither stored nor known asks the coupon route only: issued coupons are left out too
      expect(await shop.validateCoupon('WELCOME10', { amount: 50_000 })).toMatchObject({ ok: true, source: 'network' });
      expect(asked.filter((a) => /coupons$|issue-coupons|\/relay\/v1\/(feed|products)/.test(a))).toEqual([]);
      expect(asked).toContain('GET /relay/v1');
    } finally {
      await shop.close();
    }
  });

  it('an engine on a relay whose feed leaves coupons out syncs the options from it and keeps the coupons it read by code', async () => {
    const f = await relayWith({ public: false, authorize: noCoupons, products: [PRODUCT] }, {}, { listed: true });
    const shop = lookupFor({ url: `${f.origin}${BASE}` }, { auth: undefined, products: [PRODUCT] });
    try {
      const read = await next(shop.coupon('WELCOME10'), (r) => r.data !== null && !r.fetching);
      expect(read.data?.coupon_code).toBe('WELCOME10');
      const report = await shop.sync(); // the feed (options only): a snapshot written aside, then swapped in
      expect(report.ok).toBe(true);
      const options = await confirmed(shop.productOptions(PRODUCT));
      expect(options.data.length).toBe(f.api.data.products.get(PRODUCT)!.length);
      const status = await next(shop.status(), (s) => s.phase === 'idle');
      expect(status.source).toBe('relay');
      expect(status.lastSyncedAt.coupons).toBeNull(); // the coupon list was never confirmed
      const kept = await next(shop.coupon('WELCOME10'), (r) => !r.fetching);
      expect(kept.data?.coupon_code).toBe('WELCOME10');
      const list = await next(shop.coupons(), (r) => !r.fetching);
      expect(list.data.map((c) => c.coupon_code)).toEqual(['WELCOME10']);
    } finally {
      await shop.close();
    }
  });
});
