// The shop's upstream budget shared fairly (issue 25, item 11). Driven slot by slot with a limiter the test grants
// by hand, so what is checked is the order in which queued requests are served, never how long anything took:
// a till asking while twenty clients flood is served within one round of theirs, each flooding client gets one slot
// per round, the listing keeps its share while it waits, and a client queueing past its bound gets 429 at once.
// (The wall-clock figures, a till's lookup and the listing's time under that attack, are rows of `npm run bench`.)
import { describe, expect, it } from 'vitest';
import { MOCK_CODES } from '../packages/mock-server/src';
import { createFairShare } from '../packages/relay/src/door/fairShare';
import { createMemoryStore, type RelayStore } from '../packages/relay/src';
import type { RateLimiter, RequestClass } from '../packages/shop-api/src/api/rateLimiter';
import { relaysPerTest } from './relayUtils';

/** A limiter whose slots the test grants one at a time (or, until `hold()`, at once). */
function handLimiter() {
  const asks: Record<RequestClass, (() => void)[]> = { list: [], other: [] };
  let auto = true;
  const limiter: RateLimiter = {
    acquire: (cls, _priority, signal) =>
      auto ? Promise.resolve() : new Promise<void>((resolve, reject) => {
        asks[cls].push(resolve);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
    pause: () => undefined,
    dispose: () => undefined,
  };
  return {
    limiter,
    hold: () => void (auto = false),
    /** Grants the slot asked for (the fair share asks for one at a time), then lets the promises settle. */
    async grant(cls: RequestClass = 'other'): Promise<void> {
      const next = asks[cls].shift();
      if (!next) throw new Error(`no ${cls} slot was asked for`);
      next();
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** A wait the test leaves pending: dispose() rejects it at the end, which is expected. */
const quiet = (wait: Promise<unknown>): void => void wait.catch(() => undefined);

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('fair share of the upstream budget', () => {
  it('serves twenty flooding clients one slot each per round, and a till that asks within one round of theirs', async () => {
    const hand = handLimiter();
    hand.hold();
    const fair = createFairShare({ limiter: hand.limiter, queued: 4, ownShare: 0.75, limits: { list: 1, other: 5 } });
    const served: string[] = [];
    const attackers = Array.from({ length: 20 }, (_, i) => `attacker-${i}`);
    for (const id of attackers) {
      for (let n = 0; n < 4; n++) quiet(fair.forClient(id).acquire('other', 'user').then(() => served.push(id)));
    }
    quiet(fair.forClient('till').acquire('other', 'user').then(() => served.push('till')));
    await settle();
    for (let slot = 0; slot < 21; slot++) await hand.grant();
    // a new client joins the end of the round under way: it is served within the first round
    expect(served.indexOf('till')).toBeLessThanOrEqual(20);
    expect(new Set(served.slice(0, 21))).toEqual(new Set([...attackers, 'till']));
    for (let slot = 0; slot < 10; slot++) await hand.grant();
    // the till asks again now: it was served longer ago than half the attackers, so it goes before them
    quiet(fair.forClient('till').acquire('other', 'user').then(() => served.push('till again')));
    await settle();
    const before = served.length;
    for (let slot = 0; slot < 11; slot++) await hand.grant();
    expect(served.indexOf('till again') - before).toBeLessThanOrEqual(10);
    // every attacker got its second slot only after every other attacker had its first
    const rounds = attackers.map((id) => served.filter((s) => s === id).length);
    expect(Math.max(...rounds) - Math.min(...rounds)).toBeLessThanOrEqual(1);
    fair.dispose();
  });

  it('serves a till that asks now and then at the next slot, however many clients flood, new ones included', async () => {
    const hand = handLimiter();
    hand.hold();
    const fair = createFairShare({ limiter: hand.limiter, queued: 4, ownShare: 0.75, limits: { list: 1, other: 5 } });
    const served: string[] = [];
    // the till was there before the flood (it looked a coupon up when the shop opened)
    quiet(fair.forClient('till').acquire('other', 'user').then(() => served.push('till before')));
    await settle();
    await hand.grant();
    const flood = (id: string): void => quiet(fair.forClient(id).acquire('other', 'user').then(() => (served.push(id), flood(id))));
    for (let i = 0; i < 20; i++) for (let n = 0; n < 4; n++) flood(`attacker-${i}`);
    await settle();
    for (let slot = 0; slot < 45; slot++) await hand.grant(); // the attackers have all been served, twice
    for (let lookup = 0; lookup < 3; lookup++) {
      // new addresses join the flood just before the till asks: they join the end of the round, behind the till
      for (let k = 0; k < 5; k++) flood(`newcomer-${lookup}-${k}`);
      await settle();
      quiet(fair.forClient('till').acquire('other', 'user').then(() => served.push(`till ${lookup}`)));
      await settle();
      await hand.grant();
      expect(served.at(-1)).toBe(`till ${lookup}`);
      // a full round of the (up to 35) flooding clients: each is served after the till again
      for (let slot = 0; slot < 40; slot++) await hand.grant();
    }
    fair.dispose();
  });

  it("keeps the listing's share while it waits: three slots of four, whatever the clients queue", async () => {
    const hand = handLimiter();
    hand.hold();
    const fair = createFairShare({ limiter: hand.limiter, queued: 4, ownShare: 0.75, limits: { list: 1, other: 5 } });
    const served: string[] = [];
    const flood = (id: string): void => quiet(fair.forClient(id).acquire('list', 'user').then(() => (served.push(id), flood(id))));
    for (let i = 0; i < 20; i++) for (let n = 0; n < 4; n++) flood(`reader-${i}`);
    // the listing asks for its next page once the last one is in, as listResource does
    let pages = 0;
    const listing = (async () => {
      while (pages < 12) {
        await fair.own.acquire('list', 'background');
        served.push('listing');
        pages++;
      }
    })();
    await settle();
    for (let slot = 0; slot < 16; slot++) await hand.grant('list');
    await listing;
    expect(served.filter((s) => s === 'listing')).toHaveLength(12);
    expect(served.slice(0, 16).filter((s) => s !== 'listing')).toHaveLength(4);
    // the clients' reads are not starved either: they get the slots the listing leaves, in turn
    expect(new Set(served.slice(0, 16).filter((s) => s !== 'listing')).size).toBe(4);
    fair.dispose();
  });

  it('refuses what a client queues past its bound at once, with a Retry-After of about one round', async () => {
    const hand = handLimiter();
    hand.hold();
    const fair = createFairShare({ limiter: hand.limiter, queued: 2, ownShare: 0.75, limits: { list: 1, other: 5 } });
    const a = fair.forClient('a');
    quiet(a.acquire('other', 'user'));
    quiet(a.acquire('other', 'user'));
    for (let i = 0; i < 9; i++) quiet(fair.forClient(`c${i}`).acquire('other', 'user'));
    await expect(a.acquire('other', 'user')).rejects.toMatchObject({ code: 'too_many_requests', retryAfterMs: 2200 });
    // another client is not refused for a's backlog, and a is refused only while its queue is full
    const b = fair.forClient('b').acquire('other', 'user');
    await hand.grant(); // a's first: a has room for one more
    const third = a.acquire('other', 'user');
    for (let slot = 0; slot < 10; slot++) await hand.grant(); // c0…c8 (they came before b), then b
    await expect(b).resolves.toBeUndefined();
    expect(fair.served('other')).toEqual(['a', ...Array.from({ length: 9 }, (_, i) => `c${i}`), 'b']);
    fair.dispose();
    await expect(third).rejects.toMatchObject({ code: 'closed' });
  });

  it('gives no slot to a request whose client went away', async () => {
    const hand = handLimiter();
    hand.hold();
    const fair = createFairShare({ limiter: hand.limiter, queued: 4, ownShare: 0.75, limits: { list: 1, other: 5 } });
    const gone = new AbortController();
    const abandoned = fair.forClient('a').acquire('other', 'user', gone.signal);
    const waiting = fair.forClient('b').acquire('other', 'user');
    gone.abort(new Error('the client went away'));
    await expect(abandoned).rejects.toThrow('the client went away');
    await hand.grant();
    await expect(waiting).resolves.toBeUndefined();
    expect(fair.served('other')).toEqual(['b']);
    fair.dispose();
  });
});

describe('fair share through the relay', () => {
  const { relayWith } = relaysPerTest();

  /** A memory store whose shop-wide limiter is granted by hand. */
  function storeWith(limiter: RateLimiter): RelayStore {
    const inner = createMemoryStore();
    return new Proxy(inner, {
      get: (target, name, receiver) => (name === 'rateLimiter' ? () => limiter : Reflect.get(target, name, receiver)),
    });
  }

  it("serves a till's lookup before clients that flood with made-up codes, and answers their surplus 429", async () => {
    const hand = handLimiter();
    const f = await relayWith(
      { store: storeWith(hand.limiter), rateLimits: { list: 1, other: 5 }, clientId: (req) => String(req.headers['x-client']), itemCacheMs: 0 },
      {},
      { listed: true },
    );
    const as = (client: string) => ({ headers: { 'x-client': client } });
    // the till looked a coupon up before the flood began; the flooding clients are new
    expect((await f.get(`/v2/shop/coupons/${MOCK_CODES.fixedCoupon}`, as('till'))).status).toBe(200);
    hand.hold();
    const guesses = ['a', 'b', 'c'].flatMap((client) =>
      Array.from({ length: 4 }, (_, n) => f.get(`/v2/shop/coupons/MADE-UP-${client}-${n}`, as(client))),
    );
    await expect.poll(async () => (await f.relay.status()).upstreamWaiting).toBe(12);
    // a fifth request of a client that has four waiting is refused at once
    const surplus = await f.get('/v2/shop/coupons/MADE-UP-a-4', as('a'));
    expect(surplus).toMatchObject({ status: 429, body: { code: -7, msg: expect.stringMatching(/already has 4 requests waiting/) } });
    expect(Number(surplus.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const before = f.api.requests.filter((r) => r.path.startsWith('/v2/shop/coupons/')).length;
    const upstreamCalls = () => f.api.requests.filter((r) => r.path.startsWith('/v2/shop/coupons/')).slice(before);
    for (let slot = 0; slot < 3; slot++) {
      await hand.grant();
      await expect.poll(() => upstreamCalls().length).toBe(slot + 1);
    }
    // each flooding client was served once; now the till asks
    expect(new Set(upstreamCalls().map((r) => r.path.split('-')[2]))).toEqual(new Set(['a', 'b', 'c']));
    const lookup = f.get(`/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`, as('till'));
    await expect.poll(async () => (await f.relay.status()).upstreamWaiting).toBe(10);
    await hand.grant();
    await expect.poll(() => upstreamCalls().length).toBe(4);
    expect(upstreamCalls()[3]!.path).toBe(`/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`);
    expect((await lookup).body).toMatchObject({ code: 200, data: { coupon_code: MOCK_CODES.welcomeCoupon } });
    for (let slot = 0; slot < 9; slot++) await hand.grant();
    expect((await Promise.all(guesses)).map((g) => g.status)).toEqual(Array(12).fill(404));
  });
});
