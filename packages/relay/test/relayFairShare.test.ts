// The shop's upstream budget shared fairly (issue 25, item 11; issue 33, items 3 and 4). Driven slot by slot with a
// limiter the test grants by hand, so what is checked is the order in which queued requests are served, never how
// long anything took: a client asking while twenty clients flood is served within one round of theirs, each flooding
// client gets one slot per round, the listing keeps its share while it waits, a client queueing past its bound gets
// 429 at once; a till with its token goes ahead of a thousand anonymous addresses, addresses of one network are one
// client, and a request whose client hung up while it waited for its turn costs no upstream call.
// (The wall-clock figures, a till's lookup and the listing's time under that attack, are rows of `npm run bench`.)
import { describe, expect, it, vi } from 'vitest';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import { createFairShare } from '../src/door/fairShare';
import { createMemoryStore, type RelayStore } from '../src';
import { createTillAccess } from '../src/server/tillAccess';
import { createTillTokens } from '../src/server/tillTokens';
import { createSingleFlight } from '../src/upstream/singleFlight';
import type { RateLimiter, RequestClass } from '@shop-lookup/shop-api';
import { relaysPerTest } from '@shop-lookup/test-kit/relayUtils';

/** A limiter whose slots the test grants one at a time (or, until `hold()`, at once). */
function handLimiter() {
  const asks: Record<RequestClass, (() => void)[]> = { list: [], other: [] };
  let auto = true;
  const limiter: RateLimiter = {
    acquire: (cls, _priority, signal) =>
      auto
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            asks[cls].push(resolve);
            signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
          }),
    pause: () => undefined,
    dispose: () => undefined,
  };
  return {
    limiter,
    hold: () => void (auto = false),
    /** Slots asked for and not granted yet. */
    asked: (cls: RequestClass = 'other') => asks[cls].length,
    /** Grants the slot asked for (the fair share asks for one at a time), then lets the promises settle. */
    async grant(cls: RequestClass = 'other'): Promise<void> {
      const next = asks[cls].shift();
      if (!next) throw new Error(`no ${cls} slot was asked for`);
      next();
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** An anonymous client of the fair share, by its id. */
const anonymous = (id: string) => ({ id, identified: false });
/** A client the host identified (a till by its token). */
const till = (id: string) => ({ id, identified: true });

/** The test grants every turn itself: no anonymous wait ends by its own bound meanwhile. */
const UNBOUNDED_WAIT = { anonymousWaitMs: 3_600_000 };

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
      for (let n = 0; n < 4; n++)
        quiet(
          fair
            .forClient(anonymous(id))
            .acquire('other', 'user')
            .then(() => served.push(id)),
        );
    }
    quiet(
      fair
        .forClient(anonymous('till'))
        .acquire('other', 'user')
        .then(() => served.push('till')),
    );
    await settle();
    for (let slot = 0; slot < 21; slot++) await hand.grant();
    // a new client joins the end of the round under way: it is served within the first round
    expect(served.indexOf('till')).toBeLessThanOrEqual(20);
    expect(new Set(served.slice(0, 21))).toEqual(new Set([...attackers, 'till']));
    for (let slot = 0; slot < 10; slot++) await hand.grant();
    // the till asks again now: it was served longer ago than half the attackers, so it goes before them
    quiet(
      fair
        .forClient(anonymous('till'))
        .acquire('other', 'user')
        .then(() => served.push('till again')),
    );
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
    quiet(
      fair
        .forClient(anonymous('till'))
        .acquire('other', 'user')
        .then(() => served.push('till before')),
    );
    await settle();
    await hand.grant();
    const flood = (id: string): void =>
      quiet(
        fair
          .forClient(anonymous(id))
          .acquire('other', 'user')
          .then(() => (served.push(id), flood(id))),
      );
    for (let i = 0; i < 20; i++) for (let n = 0; n < 4; n++) flood(`attacker-${i}`);
    await settle();
    for (let slot = 0; slot < 45; slot++) await hand.grant(); // the attackers have all been served, twice
    for (let lookup = 0; lookup < 3; lookup++) {
      // new addresses join the flood just before the till asks: they join the end of the round, behind the till
      for (let k = 0; k < 5; k++) flood(`newcomer-${lookup}-${k}`);
      await settle();
      quiet(
        fair
          .forClient(anonymous('till'))
          .acquire('other', 'user')
          .then(() => served.push(`till ${lookup}`)),
      );
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
    const flood = (id: string): void =>
      quiet(
        fair
          .forClient(anonymous(id))
          .acquire('list', 'user')
          .then(() => (served.push(id), flood(id))),
      );
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
    const a = fair.forClient(anonymous('a'));
    quiet(a.acquire('other', 'user'));
    quiet(a.acquire('other', 'user'));
    for (let i = 0; i < 9; i++) quiet(fair.forClient(anonymous(`c${i}`)).acquire('other', 'user'));
    await expect(a.acquire('other', 'user')).rejects.toMatchObject({ code: 'too_many_requests', retryAfterMs: 2200 });
    // another client is not refused for a's backlog, and a is refused only while its queue is full
    const b = fair.forClient(anonymous('b')).acquire('other', 'user');
    await hand.grant(); // a's first: a has room for one more
    const third = a.acquire('other', 'user');
    for (let slot = 0; slot < 10; slot++) await hand.grant(); // c0…c8 (they came before b), then b
    await expect(b).resolves.toBeUndefined();
    expect(fair.served('other')).toEqual(['a', ...Array.from({ length: 9 }, (_, i) => `c${i}`), 'b']);
    fair.dispose();
    await expect(third).rejects.toMatchObject({ code: 'closed' });
  });

  it("refuses an anonymous request that waited anonymousWaitMs for its turn, with Retry-After; a till's waits on", async () => {
    // (only the timers: the hand limiter settles with setImmediate)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const hand = handLimiter();
      hand.hold();
      const fair = createFairShare({
        limiter: hand.limiter,
        queued: 4,
        ownShare: 0.75,
        limits: { list: 1, other: 5 },
        anonymousWaitMs: 10_000,
      });
      const flood = Array.from({ length: 250 }, (_, i) =>
        fair.forClient(anonymous(`net-${i}`)).acquire('other', 'user'),
      );
      const outcomes = flood.map((wait) =>
        wait.then(
          () => 'served',
          (error: unknown) => error,
        ),
      );
      const tillWait = fair.forClient(till('till:front-1')).acquire('other', 'user');
      await vi.advanceTimersByTimeAsync(9_999);
      expect(fair.waiting()).toBe(251);
      await vi.advanceTimersByTimeAsync(1);
      const refused = (await Promise.all(outcomes)) as { code: string; retryAfterMs: number; message: string }[];
      expect(new Set(refused.map((e) => e.code))).toEqual(new Set(['too_many_requests']));
      // about one round of the anonymous clients waiting at 5 a second, named at most a minute
      expect(refused[0]!.retryAfterMs).toBe(50_200);
      expect(refused[0]!.message).toMatch(/waited 10 s for its turn at the shop API/);
      expect(fair.waiting()).toBe(1);
      await hand.grant();
      await expect(tillWait).resolves.toBeUndefined();
      expect(fair.served('other')).toEqual(['till:front-1']);
      fair.dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives no slot to a request whose client went away', async () => {
    const hand = handLimiter();
    hand.hold();
    const fair = createFairShare({ limiter: hand.limiter, queued: 4, ownShare: 0.75, limits: { list: 1, other: 5 } });
    const gone = new AbortController();
    const abandoned = fair.forClient(anonymous('a')).acquire('other', 'user', gone.signal);
    const waiting = fair.forClient(anonymous('b')).acquire('other', 'user');
    gone.abort(new Error('the client went away'));
    await expect(abandoned).rejects.toThrow('the client went away');
    await hand.grant();
    await expect(waiting).resolves.toBeUndefined();
    expect(fair.served('other')).toEqual(['b']);
    fair.dispose();
  });
});

describe('the tills first', () => {
  it('gives a till the next slot while a thousand anonymous clients wait, and the tills three slots of four when they flood', async () => {
    const hand = handLimiter();
    hand.hold();
    const fair = createFairShare({ limiter: hand.limiter, queued: 4, ownShare: 0.75, limits: { list: 1, other: 5 } });
    const served: string[] = [];
    for (let i = 0; i < 1000; i++)
      quiet(
        fair
          .forClient(anonymous(`net-${i}`))
          .acquire('other', 'user')
          .then(() => served.push(`net-${i}`)),
      );
    await settle();
    for (let slot = 0; slot < 10; slot++) await hand.grant();
    for (let lookup = 0; lookup < 3; lookup++) {
      quiet(
        fair
          .forClient(till('front-1'))
          .acquire('other', 'user')
          .then(() => served.push(`till ${lookup}`)),
      );
      await settle();
      await hand.grant();
      expect(served.at(-1)).toBe(`till ${lookup}`);
      await hand.grant(); // an anonymous client's slot
    }
    expect(fair.waiting()).toBe(1000 - 13);
    // two tills that flood (a till's token in the wrong hands): they take three of four slots, the anonymous the rest
    const flood = (id: string): void =>
      quiet(
        fair
          .forClient(till(id))
          .acquire('other', 'user')
          .then(() => (served.push(id), flood(id))),
      );
    for (const id of ['front-2', 'front-3']) for (let n = 0; n < 4; n++) flood(id);
    await settle();
    const before = served.length;
    for (let slot = 0; slot < 40; slot++) await hand.grant();
    const tills = served.slice(before).filter((s) => s.startsWith('front-')).length;
    expect(tills).toBeGreaterThanOrEqual(30);
    expect(tills).toBeLessThanOrEqual(31);
    fair.dispose();
  });
});

describe('an abandoned request', () => {
  it('gives up a shared upstream call only once every caller waiting for it hung up', async () => {
    const flights = createSingleFlight<string>(0);
    const signals: AbortSignal[] = [];
    let finish!: (answer: string) => void;
    const work = (abandoned: AbortSignal) => {
      signals.push(abandoned);
      return new Promise<string>((resolve) => (finish = resolve));
    };
    const [a, b] = [new AbortController(), new AbortController()];
    const first = flights.run('/v2/shop/coupons/X', work, () => false, a.signal);
    const second = flights.run('/v2/shop/coupons/X', work, () => false, b.signal);
    a.abort();
    expect(signals[0]!.aborted).toBe(false); // b still waits for it
    b.abort();
    expect(signals[0]!.aborted).toBe(true);
    // a caller after that starts the call again instead of getting the abandoned one
    const third = flights.run('/v2/shop/coupons/X', work, () => false);
    expect(flights.started()).toBe(2);
    finish('answer');
    await expect(third).resolves.toBe('answer');
    expect(signals[1]!.aborted).toBe(false);
    void first;
    void second;
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
      {
        store: storeWith(hand.limiter),
        rateLimits: { list: 1, other: 5 },
        clientId: (req) => String(req.headers['x-client']),
        itemCacheMs: 0,
        clientLimits: UNBOUNDED_WAIT,
      },
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
    expect(surplus).toMatchObject({
      status: 429,
      body: { code: -7, msg: expect.stringMatching(/already has 4 requests waiting/) },
    });
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

  const TILL_TOKEN = 'till-token-of-front-1-7d0c9e2a';
  /** The relay command's access (till tokens, storefront routes open) behind one trusted proxy. */
  const tillAccess = () =>
    createTillAccess({
      tokens: createTillTokens({ entries: [{ name: 'front-1', token: TILL_TOKEN }], shop: 'fair-shop' }),
      storefrontOpen: true,
      public: false,
      opsToken: undefined,
      trustProxyHops: 1,
    });
  /** The i-th of a thousand anonymous addresses, each in a network of its own. */
  const address = (i: number) => `10.${i >> 8}.${i & 255}.7`;
  /** A listed relay with the command's access, its shop-wide limiter held by the test. */
  async function tillsRelay() {
    const hand = handLimiter();
    const access = tillAccess();
    const f = await relayWith(
      {
        public: false,
        shopId: 'fair-shop',
        store: storeWith(hand.limiter),
        rateLimits: { list: 1, other: 5 },
        itemCacheMs: 0,
        authorize: access.authorize,
        clientId: access.clientId,
        clientLimits: UNBOUNDED_WAIT,
      },
      {},
      { listed: true },
    );
    hand.hold();
    return { hand, f };
  }

  it("sends a till's read of an issued coupon before the queue of 1,000 anonymous addresses flooding made-up codes drains", async () => {
    const { hand, f } = await tillsRelay();
    const before = f.api.requests.length;
    const upstreamReads = () =>
      f.api.requests.slice(before).filter((r) => /^\/v2\/shop\/(coupons|issue-coupons)\//.test(r.path));
    for (let i = 0; i < 1000; i++)
      void f
        .get(`/v2/shop/coupons/MADE-UP-${i}`, { headers: { 'x-forwarded-for': address(i) } })
        .catch(() => undefined);
    await expect.poll(async () => (await f.relay.status()).upstreamWaiting, { timeout: 15_000 }).toBe(1000);
    for (let slot = 0; slot < 5; slot++) await hand.grant();
    await expect.poll(() => upstreamReads().length).toBe(5);
    // the till asks now, through the same proxy, from an address of its own
    const read = f.get(`/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`, {
      headers: { authorization: `Bearer ${TILL_TOKEN}`, 'x-forwarded-for': '10.200.0.7' },
    });
    await expect.poll(async () => (await f.relay.status()).upstreamWaiting).toBe(996);
    await hand.grant();
    await expect.poll(() => upstreamReads().length).toBe(6);
    expect(upstreamReads()[5]!.path).toBe(`/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`);
    expect((await read).status).toBe(200);
    // the anonymous queue is still there: the till did not wait for it to drain
    expect((await f.relay.status()).upstreamWaiting).toBe(995);
  });

  it('counts 1,000 addresses of one network as one client: four of its reads wait, the rest are refused at once', async () => {
    const { f } = await tillsRelay();
    // one /24, rotated within 203.0.113.0/24: four requests from each of 250 addresses
    const answered: number[] = [];
    for (let i = 0; i < 1000; i++) {
      void f.get(`/v2/shop/coupons/MADE-UP-${i}`, { headers: { 'x-forwarded-for': `203.0.113.${i % 250}` } }).then(
        (answer) => answered.push(answer.status),
        () => undefined,
      );
    }
    await expect.poll(() => answered.length, { timeout: 15_000 }).toBe(996);
    expect(answered.filter((status) => status === 429)).toHaveLength(996);
    expect((await f.relay.status()).upstreamWaiting).toBe(4);
  });

  it("answers an anonymous read that waited anonymousWaitMs for the shop API 429 with Retry-After; a till's read waits on", async () => {
    const hand = handLimiter();
    const access = tillAccess();
    const f = await relayWith(
      {
        public: false,
        shopId: 'fair-shop',
        store: storeWith(hand.limiter),
        rateLimits: { list: 1, other: 5 },
        itemCacheMs: 0,
        authorize: access.authorize,
        clientId: access.clientId,
        clientLimits: { anonymousWaitMs: 50 },
      },
      {},
      { listed: true },
    );
    hand.hold();
    const tillRead = f.get(`/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`, {
      headers: { authorization: `Bearer ${TILL_TOKEN}` },
    });
    const shopper = await f.get('/v2/shop/coupons/MADE-UP-1', { headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(shopper.status).toBe(429);
    expect(Number(shopper.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(shopper.body).toMatchObject({ code: -7, refusal: { code: 'too_many_requests' } });
    expect(shopper.body!.msg).toMatch(/waited 50 ms for its turn at the shop API/);
    expect((await f.relay.status()).upstreamWaiting).toBe(1);
    await hand.grant();
    expect((await tillRead).status).toBe(200);
  });

  it('makes no upstream call for 200 requests whose clients hung up while they waited for their turn', async () => {
    const hand = handLimiter();
    const f = await relayWith(
      {
        store: storeWith(hand.limiter),
        rateLimits: { list: 1, other: 5 },
        clientId: (req) => String(req.headers['x-client']),
        itemCacheMs: 0,
        clientLimits: UNBOUNDED_WAIT,
      },
      {},
      { listed: true },
    );
    hand.hold();
    const before = f.api.requests.length;
    const hangUp = new AbortController();
    const abandoned = Array.from({ length: 200 }, (_, i) =>
      f.get(`/v2/shop/coupons/MADE-UP-${i}`, { headers: { 'x-client': `shopper-${i}` }, signal: hangUp.signal }).then(
        () => 'answered',
        () => 'hung up',
      ),
    );
    await expect.poll(async () => (await f.relay.status()).upstreamWaiting, { timeout: 15_000 }).toBe(200);
    hangUp.abort();
    expect(new Set(await Promise.all(abandoned))).toEqual(new Set(['hung up']));
    await expect.poll(async () => (await f.relay.status()).upstreamWaiting).toBe(0);
    // the API answers again: every slot the relay still asks for is granted
    let granted = 0;
    while (hand.asked() > 0) {
      await hand.grant();
      granted++;
    }
    expect(granted).toBeLessThanOrEqual(1);
    expect(f.api.requests.slice(before).filter((r) => r.path.startsWith('/v2/shop/coupons/MADE-UP-'))).toEqual([]);
    // and the relay serves the next client as before
    const lookup = f.get(`/v2/shop/coupons/${MOCK_CODES.welcomeCoupon}`, { headers: { 'x-client': 'till' } });
    await expect.poll(() => hand.asked()).toBe(1);
    await hand.grant();
    expect((await lookup).status).toBe(200);
  });
});
