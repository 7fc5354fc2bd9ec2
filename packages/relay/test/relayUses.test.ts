// POST relay/v1/uses and the feed's `uses` resource: who may send (tills, never a storefront or anybody), the body
// read strictly (415, bounds, a wrong field named), idempotent by (device, entry), conflicts marked by when the
// tills accepted, carried live only to clients allowed the coupons, dropped once the API shows the code used, past
// retention, and 503 `uses_full` at the cap.
import { afterAll, describe, expect, it } from 'vitest';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import type { Authorize } from '../src';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { relaysPerTest, type RelayFixture } from '@shop-lookup/test-kit/relayUtils';

const { relayWith } = relaysPerTest();

const storefront: Authorize = (_req, route) => ['productOptions', 'productOption', 'coupon'].includes(route);
/** Tills carry `x-till: <name>`; their client id names them as the relay command's tokens do (`till:<name>`). */
const tillAuth: Authorize = (req) =>
  typeof req.headers['x-till'] === 'string' || { status: 401, message: 'Sign this till in first.' };
const tillClient = (req: import('node:http').IncomingMessage) =>
  typeof req.headers['x-till'] === 'string'
    ? { id: `till:${req.headers['x-till']}`, identified: true }
    : (req.socket.remoteAddress ?? '');

const use = (entry: string, more: Record<string, unknown> = {}) => ({
  entry,
  code: MOCK_CODES.issuedUnused,
  couponCode: MOCK_CODES.welcomeCoupon,
  orderId: `order-${entry}`,
  at: 1_000,
  override: false,
  ...more,
});

function post(
  f: RelayFixture,
  body: unknown,
  { till, type = 'application/json' }: { till?: string; type?: string } = {},
) {
  return f.get('/relay/v1/uses', {
    method: 'POST',
    headers: { 'content-type': type, ...(till ? { 'x-till': till } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The `uses` records of a whole snapshot, by code. */
async function usesIn(f: RelayFixture, headers: Record<string, string> = {}) {
  const out = new Map<string, any>();
  let page = await f.get('/relay/v1/feed?limit=1000', { headers });
  const { handle } = page.body!;
  for (;;) {
    for (const u of page.body!.upserts) if (u.resource === 'uses') out.set(u.key, u.record);
    if (page.body!.cursor === null)
      return { records: out, version: page.body!.version as number, handle: handle as string };
    page = await f.get(`/relay/v1/feed?cursor=${page.body!.cursor}&handle=${handle}&limit=1000`, { headers });
  }
}

describe('relay uses', () => {
  it('takes uses from tills only: never a storefront, never an anonymous client; discovery lists the route when allowed', async () => {
    const f = await relayWith({ public: false, authorize: tillAuth, clientId: tillClient });
    expect((await post(f, { device: 'd1', uses: [use('e1')] })).status).toBe(401);
    const ok = await post(f, { device: 'd1', uses: [use('e1')] }, { till: 'front-1' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ uses: [{ entry: 'e1', recorded: true, conflict: null }] });
    expect(ok.body!.version).toBeGreaterThan(0);
    expect((await f.get('/relay/v1', { headers: { 'x-till': 'front-1' } })).body!.routes).toContain('uses');

    const shop = await relayWith({ public: false, authorize: storefront });
    const refused = await post(shop, { device: 'd1', uses: [use('e1')] });
    expect(refused.status).toBe(403);
    expect((await shop.get('/relay/v1')).body!.routes).not.toContain('uses');
    // only POST: a GET is refused before anything else
    expect((await f.get('/relay/v1/uses', { headers: { 'x-till': 'front-1' } })).status).toBe(405);
  });

  it('reads the body strictly: JSON only (415), bounded, and a wrong field named in a 400; nothing is kept', async () => {
    const f = await relayWith();
    expect((await post(f, { device: 'd1', uses: [use('e1')] }, { type: 'text/plain' })).status).toBe(415);
    const cases: [unknown, RegExp][] = [
      ['{not json', /must be JSON/],
      [[1, 2], /the body must be/],
      [{ uses: [use('e1')] }, /device must be/],
      [{ device: 'd1', uses: 'x' }, /uses must be an array/],
      [{ device: 'd1', uses: [use('e1'), use('e2', { at: -5 })] }, /uses\[1\]\.at must be/],
      [{ device: 'd1', uses: [use('e1', { override: 'yes' })] }, /uses\[0\]\.override must be/],
      [{ device: 'd1', uses: [use('e1', { code: '' })] }, /uses\[0\]\.code must be/],
      [{ device: 'd1', uses: [use('e1', { orderId: 7 })] }, /uses\[0\]\.orderId must be/],
      [
        { device: 'd1', uses: [use('e1', { couponCode: { deep: [[[]]] } })] },
        /uses\[0\]\.couponCode must be .* got an object/,
      ],
      [{ device: 'd1', uses: [{}] }, /uses\[0\]\.entry must be/],
      [{ device: 'd1', uses: Array.from({ length: 501 }, (_, i) => use(`e${i}`)) }, /at most 500 uses/],
      [{ device: 'd1', uses: [use('e1', { pad: 'x'.repeat(70_000) })] }, /at most 65536 bytes/],
      ['['.repeat(30_000) + ']'.repeat(30_000), /the body must be/],
    ];
    for (const [body, message] of cases) {
      const answer = await post(f, body);
      expect(answer.status, String(message)).toBe(400);
      expect(answer.body, String(message)).toMatchObject({
        code: 'bad_request',
        message: expect.stringMatching(message),
      });
    }
    expect((await usesIn(f)).records.size).toBe(0);
  });

  it('records a resend once (same device and entry), and marks the later of two sales of one code a conflict, by when the tills accepted them', async () => {
    const f = await relayWith({ public: false, authorize: tillAuth, clientId: tillClient }, {}, { listed: true });
    const first = await post(f, { device: 'd1', uses: [use('e1', { at: 5_000 })] }, { till: 'front-1' });
    const again = await post(f, { device: 'd1', uses: [use('e1', { at: 5_000 })] }, { till: 'front-1' });
    expect(again.body!.uses).toEqual([{ entry: 'e1', recorded: false, conflict: null }]);
    expect(again.body!.version).toBe(first.body!.version); // nothing committed
    // the same device and order again (a re-validation of one sale): not a conflict
    const same = await post(
      f,
      { device: 'd1', uses: [use('e2', { at: 6_000, orderId: 'order-e1' })] },
      { till: 'front-1' },
    );
    expect(same.body!.uses).toEqual([{ entry: 'e2', recorded: true, conflict: null }]);
    // another till, later: a conflict with the first sale
    const later = await post(f, { device: 'd2', uses: [use('x1', { at: 7_000 })] }, { till: 'back-2' });
    expect(later.body!.uses).toEqual([
      { entry: 'x1', recorded: true, conflict: { till: 'front-1', at: 5_000, orderId: 'order-e1' } },
    ]);
    // an offline till that accepted it earlier than everybody: it is the first; the others are the conflicts
    const earlier = await post(
      f,
      { device: 'd3', uses: [use('y1', { at: 1_000, orderId: null })] },
      { till: 'side-3' },
    );
    expect(earlier.body!.uses).toEqual([{ entry: 'y1', recorded: true, conflict: null }]);
    const { records } = await usesIn(f, { 'x-till': 'front-1' });
    const record = records.get(MOCK_CODES.issuedUnused);
    expect(record).toMatchObject({ code: MOCK_CODES.issuedUnused, couponCode: MOCK_CODES.welcomeCoupon });
    expect(record.uses.map((u: any) => [u.till, u.device, u.entry, u.at, u.conflict])).toEqual([
      ['side-3', 'd3', 'y1', 1_000, false],
      ['front-1', 'd1', 'e1', 5_000, true],
      ['front-1', 'd1', 'e2', 6_000, true],
      ['back-2', 'd2', 'x1', 7_000, true],
    ]);
    expect(record.uses[0]).toEqual(
      expect.objectContaining({ orderId: null, override: false, receivedAt: expect.any(Number) }),
    );
    // the resend after the marks moved answers the mark as it is now
    const resent = await post(f, { device: 'd1', uses: [use('e1', { at: 5_000 })] }, { till: 'front-1' });
    expect(resent.body!.uses).toEqual([
      { entry: 'e1', recorded: false, conflict: { till: 'side-3', at: 1_000, orderId: null } },
    ]);
  });

  it("orders uses by a time the relay can trust: a connected till's back-dated use (at 0, a clock an hour behind) is never first over a sale it already had", async () => {
    let clock = 1_800_000_000_000;
    const f = await relayWith(
      { public: false, authorize: tillAuth, clientId: tillClient, now: () => clock },
      {},
      { listed: true },
    );
    const feed = (till: string) => f.get('/relay/v1/feed?limit=1', { headers: { 'x-till': till } });
    // till 2 is on the feed (its live long-poll) for a minute
    expect((await feed('front-2')).status).toBe(200);
    clock += 25_000;
    await feed('front-2');
    clock += 25_000;
    await feed('front-2');
    // till 1 sells the voucher
    clock += 10_000;
    const sold = clock;
    const real = await post(f, { device: 'd1', uses: [use('e1', { at: sold })] }, { till: 'front-1' });
    expect(real.body!.uses[0].conflict).toBeNull();
    // a second later till 2 sends a use of it dated 0, and one of another voucher by a clock an hour behind
    clock += 1_000;
    const late = await post(
      f,
      {
        device: 'd2',
        uses: [use('x1', { at: 0 }), use('x2', { at: clock - 3_600_000, code: MOCK_CODES.issuedUsed })],
      },
      { till: 'front-2' },
    );
    expect(late.body!.uses[0]).toEqual({
      entry: 'x1',
      recorded: true,
      conflict: { till: 'front-1', at: sold, orderId: 'order-e1' },
    });
    const { records } = await usesIn(f, { 'x-till': 'front-1' });
    expect(records.get(MOCK_CODES.issuedUnused).uses.map((u: any) => [u.till, u.at, u.claimedAt, u.conflict])).toEqual([
      ['front-1', sold, sold, false],
      ['front-2', clock, 0, true],
    ]);
    expect(records.get(MOCK_CODES.issuedUsed).uses[0]).toMatchObject({ at: clock, claimedAt: clock - 3_600_000 });
  });

  it("no till can fill the shop's uses: past its share only its POSTs are refused, its made-up codes go once the API says so and still count against it", async () => {
    let clock = 1_800_000_000_000;
    const f = await relayWith(
      { public: false, authorize: tillAuth, clientId: tillClient, now: () => clock, maxUses: 200 },
      {},
      { listed: true },
    );
    // a stolen till token posts uses of made-up codes, 50 a request
    const made = (round: number) =>
      Array.from({ length: 50 }, (_, j) => use(`m${round}-${j}`, { code: `FAKE-${round}-${j}`, at: clock }));
    const statuses: number[] = [];
    for (let round = 0; round < 4; round++) {
      const answer = await post(f, { device: 'dx', uses: made(round) }, { till: 'thief' });
      statuses.push(answer.status);
      if (answer.status !== 200) {
        expect(answer.body).toMatchObject({ code: 'till_uses_full', message: expect.stringContaining('thief') });
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    // its share (a twentieth of maxUses, at least 100) is full after two requests; nobody else is refused
    expect(statuses).toEqual([200, 200, 429, 429]);
    const honest = await post(f, { device: 'd1', uses: [use('e1')] }, { till: 'front-1' });
    expect(honest.status).toBe(200);
    expect(honest.body!.uses).toEqual([{ entry: 'e1', recorded: true, conflict: null }]);
    // five minutes on, the relay checks the codes no till read, at the API's pace: the shop has none of them
    clock += 6 * 60_000;
    for (let round = 0; round < 12; round++) await f.relay.refresh();
    expect((await f.relay.listUses({ till: 'thief' })).length).toBe(0);
    // the honest till's code, read by nobody either, exists: its use stays
    expect((await f.relay.listUses({ till: 'front-1' })).map((r) => r.code)).toEqual([MOCK_CODES.issuedUnused]);
    // the dropped uses still count against the till that sent them (until retention)
    expect((await post(f, { device: 'dx', uses: made(9).slice(0, 1) }, { till: 'thief' })).status).toBe(429);
    expect(
      (await post(f, { device: 'd1', uses: [use('e2', { code: MOCK_CODES.issuedUsed })] }, { till: 'front-1' })).status,
    ).toBe(200);
  });

  it('an operator drops what a stolen till token marked: the voucher is free again at every till, and the drop is logged', async () => {
    const lines: string[] = [];
    const f = await relayWith(
      {
        public: false,
        authorize: tillAuth,
        clientId: tillClient,
        observer: { log: (_level, message) => void lines.push(message) },
      },
      {},
      { listed: true },
    );
    const start = await usesIn(f, { 'x-till': 'front-1' });
    await post(f, { device: 'dx', uses: [use('s1'), use('s2', { code: MOCK_CODES.issuedUsed })] }, { till: 'thief' });
    await post(f, { device: 'd1', uses: [use('e1', { code: MOCK_CODES.issuedUsed, at: 500 })] }, { till: 'front-1' });
    expect((await f.relay.listUses({ till: 'thief' })).map((r) => r.code).sort()).toEqual(
      [MOCK_CODES.issuedUnused, MOCK_CODES.issuedUsed].sort(),
    );
    expect(await f.relay.dropUses({ till: 'thief', by: 'the shop manager' })).toEqual({ codes: 2, uses: 2 });
    expect(lines.join('\n')).toMatch(/uses dropped by the shop manager: 2 uses of 2 codes \(till thief/);
    // every till hears it: the stolen use's code is deleted; the honest sale of the other stays, now without conflict
    const changes = await f.get(`/relay/v1/feed?since=${start.version}&handle=${start.handle}`, {
      headers: { 'x-till': 'front-1' },
    });
    expect(changes.body!.deletes).toEqual([{ resource: 'uses', key: MOCK_CODES.issuedUnused }]);
    const { records } = await usesIn(f, { 'x-till': 'front-1' });
    expect([...records.keys()]).toEqual([MOCK_CODES.issuedUsed]);
    expect(records.get(MOCK_CODES.issuedUsed).uses.map((u: any) => [u.till, u.conflict])).toEqual([['front-1', false]]);
    // and a voucher's uses by code
    expect(await f.relay.dropUses({ codes: [MOCK_CODES.issuedUsed] })).toEqual({ codes: 1, uses: 1 });
    expect(await f.relay.dropUses({})).toEqual({ codes: 0, uses: 0 }); // (nothing named: nothing dropped)
  });

  it('carries uses only to clients allowed the coupons: snapshot, changes and a long-poll woken by a use', async () => {
    const noCoupons: Authorize = (req, route) =>
      typeof req.headers['x-till'] === 'string' ||
      (route !== 'coupons' && route !== 'issuedCoupon' && route !== 'uses');
    const f = await relayWith({ public: false, authorize: noCoupons, clientId: tillClient }, {}, { listed: true });
    const till = { 'x-till': 'front-1' };
    const start = await usesIn(f, till);
    // a till waits on the feed; another till's use wakes it
    const poll = f.get(`/relay/v1/feed?since=${start.version}&handle=${start.handle}&wait=30`, { headers: till });
    const posted = await post(f, { device: 'd2', uses: [use('e1')] }, { till: 'back-2' });
    const woken = await poll;
    expect(woken.status).toBe(200);
    expect(woken.body!.upserts).toEqual([expect.objectContaining({ resource: 'uses', key: MOCK_CODES.issuedUnused })]);
    expect(woken.body!.version).toBe(posted.body!.version);
    expect((await usesIn(f, till)).records.has(MOCK_CODES.issuedUnused)).toBe(true);

    // the client without the coupons: not in its snapshot, not in its changes
    const other = await usesIn(f);
    expect(other.records.size).toBe(0);
    const changes = await f.get(`/relay/v1/feed?since=${start.version}&handle=${start.handle}`);
    expect(changes.status).toBe(200);
    expect([...changes.body!.upserts, ...changes.body!.deletes].filter((u: any) => u.resource === 'uses')).toEqual([]);
  });

  it('keeps a mark of a code once an issued-coupon answer the relay reads shows it used: its first use only, and a later use is a conflict', async () => {
    const f = await relayWith({ itemCacheMs: 0 }, {}, { listed: true });
    await post(f, {
      device: 'd1',
      uses: [
        use('e1'),
        use('e2', { code: MOCK_CODES.issuedUsed }),
        use('e3', { code: MOCK_CODES.issuedUsed, at: 2_000 }),
      ],
    });
    const before = await usesIn(f);
    expect([...before.records.keys()].sort()).toEqual([MOCK_CODES.issuedUnused, MOCK_CODES.issuedUsed].sort());
    // read through: unused stays as it is, used becomes a mark (its first use, confirmed)
    expect((await f.get(`/v2/shop/issue-coupons/${encodeURIComponent(MOCK_CODES.issuedUnused)}`)).status).toBe(200);
    expect((await f.get(`/v2/shop/issue-coupons/${encodeURIComponent(MOCK_CODES.issuedUsed)}`)).status).toBe(200);
    await expect
      .poll(async () => (await usesIn(f)).records.get(MOCK_CODES.issuedUsed))
      .toMatchObject({ confirmed: expect.any(Number), uses: [{ entry: 'e2', conflict: false }] });
    expect((await usesIn(f)).records.get(MOCK_CODES.issuedUnused).uses).toHaveLength(1);
    const changes = await f.get(`/relay/v1/feed?since=${before.version}&handle=${before.handle}`);
    expect(changes.body!.upserts.map((u: any) => u.key)).toEqual([MOCK_CODES.issuedUsed]);
    // reading it again changes nothing
    await f.get(`/v2/shop/issue-coupons/${encodeURIComponent(MOCK_CODES.issuedUsed)}`);
    // a use that arrives after (an offline till's) is a conflict with the sale the API shows
    const late = await post(f, { device: 'd2', uses: [use('x1', { code: MOCK_CODES.issuedUsed, at: 500 })] });
    expect(late.body!.uses).toEqual([
      { entry: 'x1', recorded: true, conflict: { till: 'd1', at: 1_000, orderId: 'order-e2' } },
    ]);
    const mark = (await usesIn(f)).records.get(MOCK_CODES.issuedUsed);
    expect(mark.uses.map((u: any) => [u.entry, u.conflict])).toEqual([
      ['e2', false],
      ['x1', true],
    ]);
  });

  it("answers an issued coupon from the API each time (its answer is not kept for itemCacheMs): a use the API shows now is never 'not shown yet'", async () => {
    const f = await relayWith({}, {}, { listed: true }); // (the default itemCacheMs: 2 s)
    const path = `/v2/shop/issue-coupons/${encodeURIComponent(MOCK_CODES.issuedUnused)}`;
    expect((await f.get(path)).body!.data).toMatchObject({ use_date: '' });
    const open = f.api.data.issuedCoupons.find((c: any) => c.coupon_issue_code === MOCK_CODES.issuedUnused);
    f.api.upsertIssuedCoupon({ ...open, use_date: '2026-11-27 10:00:00', shop_order_code: 'A-1' });
    expect((await f.get(path)).body!.data).toMatchObject({ use_date: '2026-11-27 10:00:00' });
    // (a coupon's answer is still kept: a storefront's many readers share it)
    const coupon = `/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`;
    await f.get(coupon);
    const before = f.api.requests.filter((r: any) => r.path === coupon).length;
    await f.get(coupon);
    expect(f.api.requests.filter((r: any) => r.path === coupon).length).toBe(before);
  });

  it('drops uses past usesRetentionMs (by the relay clock) and answers 503 uses_full with Retry-After at maxUses', async () => {
    let clock = 1_000_000;
    const f = await relayWith({ now: () => clock, usesRetentionMs: 60_000, maxUses: 3 });
    await post(f, { device: 'd1', uses: [use('e1', { code: 'IC-A' }), use('e2', { code: 'IC-B' })] });
    clock += 30_000;
    await post(f, { device: 'd1', uses: [use('e3', { code: 'IC-B' })] });
    // full: nothing has expired yet
    const full = await post(f, { device: 'd2', uses: [use('x1', { code: 'IC-C' })] });
    expect(full.status).toBe(503);
    expect(full.body).toMatchObject({ code: 'uses_full', message: expect.stringContaining('maxUses') });
    expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);
    // IC-A's only use is past retention; IC-B's newest is not: the sweep drops IC-A
    clock += 40_000;
    await f.relay.refresh();
    const kept = await usesIn(f);
    expect([...kept.records.keys()]).toEqual(['IC-B']);
    // a till the relay cannot name (a public relay: anonymous) is named by its device
    expect(kept.records.get('IC-B').uses.map((u: any) => u.till)).toEqual(['d1', 'd1']);
    expect((await post(f, { device: 'd2', uses: [use('x1', { code: 'IC-C' })] })).status).toBe(200);
    // at the cap again: the POST itself drops the expired first
    clock += 61_000;
    const after = await post(f, {
      device: 'd2',
      uses: [use('x2', { code: 'IC-D' }), use('x3', { code: 'IC-E' }), use('x4', { code: 'IC-F' })],
    });
    expect(after.status).toBe(200);
    expect([...(await usesIn(f)).records.keys()].sort()).toEqual(['IC-D', 'IC-E', 'IC-F']);
  });
});

describe('relay uses on Redis', () => {
  let redis: Promise<RedisServer> | undefined;
  afterAll(async () => {
    if (redis) await (await redis).stop();
  });

  it('two instances of a shop on one Redis: tills sending at once through both, every use kept once, each instance live', async () => {
    redis ??= startRedisServer();
    const { url } = await redis;
    const a = await relayWith({ redis: url, shopId: 'uses-two' }, {}, { listed: true });
    const b = await relayWith({ redis: url, shopId: 'uses-two', target: a.api.url });
    const start = await usesIn(b);
    // b's long-poll wakes on a's first commit
    const poll = b.get(`/relay/v1/feed?since=${start.version}&handle=${start.handle}&wait=30`);
    // 20 tills, 5 uses each, each sent twice (a lost answer), through either instance, all at once; 10 codes
    const sends = Array.from({ length: 20 }, (_, t) => {
      const body = {
        device: `dev-${t}`,
        uses: Array.from({ length: 5 }, (_, i) => use(`e${i}`, { code: `IC-${(t + i) % 10}`, at: t * 10 + i })),
      };
      return [post(t % 2 ? a : b, body), post(t % 2 ? b : a, body)];
    }).flat();
    const answers = await Promise.all(sends);
    expect(answers.map((x) => x.status)).toEqual(answers.map(() => 200));
    // each (device, entry) recorded by exactly one of its two sends
    const recorded = answers.flatMap((x) => x.body!.uses).filter((u: any) => u.recorded).length;
    expect(recorded).toBe(100);
    expect((await poll).body!.upserts.some((u: any) => u.resource === 'uses')).toBe(true);
    for (const f of [a, b]) {
      const { records } = await usesIn(f);
      const all = [...records.values()].flatMap((r: any) => r.uses.map((u: any) => `${u.device}/${u.entry}`));
      expect(all).toHaveLength(100);
      expect(new Set(all).size).toBe(100);
    }
  });
});
