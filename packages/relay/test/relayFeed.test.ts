// The relay's feed (PROTOCOL.md) against the real mock API: snapshot in chunks, changes since a version, ETag/304,
// the long-poll woken by a commit, 409 must_refetch, products, status.
import { describe, expect, it } from 'vitest';
import { relaysPerTest } from '@shop-lookup/test-kit/relayUtils';

const relays = relaysPerTest();
const relayWith = (...args: Parameters<typeof relays.relayWith>) =>
  relays.relayWith(args[0], args[1], { listed: true });

describe('relay feed', () => {
  it('answers discovery with the protocol version and the shop id', async () => {
    const f = await relayWith({ shopId: 'shop-7' });
    const d = await f.get('/relay/v1');
    expect(d.status).toBe(200);
    expect(d.body).toEqual({
      relay: 'shop-lookup',
      protocol: 1,
      shop: 'shop-7',
      feed: 'relay/v1/feed',
      products: 'relay/v1/products',
      uses: 'relay/v1/uses',
      routes: [
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
      ],
    });
    expect(d.headers.get('x-content-type-options')).toBe('nosniff');
    expect(d.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('names its shop in every feed answer, snapshot and changes (a till checks it before writing)', async () => {
    const f = await relayWith({ shopId: 'shop-7' });
    const first = await f.get('/relay/v1/feed?limit=1');
    expect(first.body).toMatchObject({ shop: 'shop-7', kind: 'snapshot' });
    const changes = await f.get(`/relay/v1/feed?since=${first.body!.version}&handle=${first.body!.handle}`);
    expect(changes.body).toMatchObject({ shop: 'shop-7', kind: 'changes' });
  });

  it('hands out every coupon of the API as a snapshot in chunks', async () => {
    const f = await relayWith({}, { data: { coupons: 57 } });
    const snap = await f.snapshot(10);
    const codes = [...snap.records.keys()]
      .filter((k) => k.startsWith('coupons/'))
      .map((k) => k.slice(8))
      .sort();
    expect(codes).toEqual(
      f.api.data.coupons
        .map((c) => String(c.coupon_code))
        .filter((c) => snap.records.has(`coupons/${c}`))
        .sort(),
    );
    // every coupon that passes its schema is there (the mock's data holds a few malformed ones on purpose)
    const status = await f.get('/relay/v1/status');
    expect(codes.length).toBeGreaterThan(40);
    expect(snap.version).toBe(status.body!.version);
    expect(status.body!.confirmedAt.coupons).toBeGreaterThan(0);
  });

  it('answers the changes after a version, then 304 to the same ETag once nothing changed', async () => {
    const f = await relayWith({}, { data: { coupons: 30 } });
    const snap = await f.snapshot();
    f.api.upsertCoupon({ ...f.api.data.coupons[3], name: 'renamed' });
    const gone = String(f.api.data.coupons[5]!.coupon_code);
    f.api.removeCoupon(gone);
    await f.relay.refresh();
    const changes = await f.get(`/relay/v1/feed?since=${snap.version}&handle=${snap.handle}`);
    expect(changes.status).toBe(200);
    expect(changes.body).toMatchObject({ kind: 'changes', more: false, handle: snap.handle });
    expect(changes.body!.upserts.map((u: any) => u.record.name)).toEqual(['renamed']);
    expect(changes.body!.deletes).toEqual([{ resource: 'coupons', key: gone }]);
    expect(changes.body!.version).toBeGreaterThan(snap.version);
    const etag = changes.headers.get('etag')!;
    const again = await f.get(`/relay/v1/feed?since=${changes.body!.version}&handle=${snap.handle}`, {
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('answers 409 must_refetch for another handle or a version newer than its own', async () => {
    const f = await relayWith({}, { data: { coupons: 5 } });
    const snap = await f.snapshot();
    const other = await f.get(`/relay/v1/feed?since=${snap.version}&handle=someone-else`);
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'must_refetch' });
    const future = await f.get(`/relay/v1/feed?since=${snap.version + 100}&handle=${snap.handle}`);
    expect(future.status).toBe(409);
  });

  it('holds a long-poll until a commit moves the head, then answers the change', async () => {
    const f = await relayWith({}, { data: { coupons: 10 } });
    const snap = await f.snapshot();
    const poll = f.get(`/relay/v1/feed?since=${snap.version}&handle=${snap.handle}&wait=30`, {
      headers: { 'if-none-match': snap.etag },
    });
    // the poll is parked (and still unanswered) before anything changes
    await expect.poll(async () => (await f.relay.status()).waiting).toBe(1);
    f.api.upsertCoupon({ ...f.api.data.coupons[0], name: 'woken' });
    await f.relay.refresh();
    const answer = await poll;
    expect(answer.status).toBe(200);
    expect(answer.body!.upserts.map((u: any) => u.record.name)).toEqual(['woken']);
  });
});
