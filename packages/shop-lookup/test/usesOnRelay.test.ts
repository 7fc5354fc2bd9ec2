// Tills sharing their uses of issued coupons through one relay (the real relay, embedded store, in front of the real
// mock API): a voucher used at one till is refused at the other, online and offline; two offline tills that both
// accepted it both see the conflict; a lost answer, a reload, an override, a direct till, a database of version 6.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Dexie from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import { createShopRelay, type ShopRelayOptions } from '@shop-lookup/relay';
import type { JournalEntry, ShopLookup, ShopLookupOptions } from '../src';
import type { DeviceRow } from '../worker/store/store';
import { KEY, lookupFor, next, peek, SECRET, startMock, waitFor } from './utils';

const CODE = MOCK_CODES.issuedUnused;
const USES = '/relay/v1/uses';

/** The till a request comes from: its bearer token's name (a till token), else anonymous by address. */
const tillOf = (req: IncomingMessage) => {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  return token ? { id: `till:${token}`, identified: true } : (req.socket.remoteAddress ?? 'unknown');
};

/**
 * A fetch that records the POSTs of uses and their answers, and can drop the next answer (the relay got the request).
 */
function usesFetch() {
  const posts: {
    body: { device: string; uses: { entry: string; override: boolean }[] };
    answer: { uses: { entry: string; recorded: boolean }[] } | null;
  }[] = [];
  let dropNext = false;
  const fn: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!new URL(String(input)).pathname.endsWith(USES)) return res;
    const post: (typeof posts)[number] = { body: JSON.parse(String(init?.body)), answer: null };
    posts.push(post);
    if (dropNext) {
      dropNext = false;
      await res.body?.cancel();
      throw new TypeError('fetch failed: the connection was reset after the request was sent');
    }
    post.answer = await res.clone().json();
    return res;
  };
  return { fn, posts, dropNextAnswer: () => (dropNext = true) };
}

/** A fetch that holds every claim (a POST of uses with `claim: true`) until `release()`; then they go on. */
function claimGate(fetchFn: typeof fetch = fetch) {
  const held: (() => void)[] = [];
  let open = false;
  const gate = {
    held: () => held.length,
    release() {
      open = true;
      for (const go of held.splice(0)) go();
    },
    fn: (async (input, init) => {
      const body = typeof init?.body === 'string' ? init.body : '';
      if (!open && new URL(String(input)).pathname.endsWith(USES) && body.includes('"claim":true'))
        await new Promise<void>((go, stop) => {
          held.push(go);
          // (as a request on the wire: given up when its signal aborts)
          init?.signal?.addEventListener('abort', () => stop(init.signal!.reason), { once: true });
        });
      return fetchFn(input, init);
    }) as typeof fetch,
  };
  return gate;
}

/** A fetch that fails like a dropped network while `off` is set (one till offline, the others not). */
function switchable() {
  const link = {
    off: false,
    fn: (async (input, init) => {
      if (link.off) throw new TypeError('fetch failed: the network is down');
      return fetch(input, init);
    }) as typeof fetch,
  };
  return link;
}

const deviceOf = (t: { idb: IDBFactory }, dbName: string) =>
  peek(t.idb, dbName, async (db) => ((await db.meta.get('@device')) as DeviceRow | undefined)?.id);
const usesHeard = (t: { idb: IDBFactory }, dbName: string) => peek(t.idb, dbName, (db) => db.sharedUses.get(CODE));
const journalOf = async (t: ShopLookup) => (await t.offlineJournal()).filter((e) => e.code === CODE);

describe('uses of issued coupons shared through the relay', () => {
  let mock: MockShopApi;
  let relay: ReturnType<typeof createShopRelay>;
  let server: Server;
  let base: string;
  /** The relay unreachable: every connection is dropped. */
  let down = false;
  const tills: ShopLookup[] = [];
  let counter = 0;
  /** A till on the relay with its own database; `token` names it on the relay (front-1, ...). */
  const till = (name: string | null, options: Partial<ShopLookupOptions> = {}) => {
    const dbName = `till-${++counter}`;
    const t = lookupFor({ url: base }, { auth: undefined, dbName, ...(name ? { token: name } : {}), ...options });
    tills.push(t);
    return Object.assign(t, { dbName });
  };
  const startRelay = async (options: Partial<ShopRelayOptions> = {}) => {
    relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      public: true,
      rateLimits: false,
      refreshIntervalMs: 60 * 60 * 1000,
      clientId: tillOf,
      ...options,
    });
    await relay.refresh();
  };

  beforeEach(async () => {
    mock = await startMock();
    await startRelay();
    server = createServer((req, res) => (down ? req.socket.destroy() : relay(req, res)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/shop-api`;
  });
  afterEach(async () => {
    down = false;
    for (const t of tills.splice(0)) await t.close();
    await relay.close();
    await new Promise((r) => server.close(r));
    await mock.close();
  });

  it('online: till 1 accepts a voucher, till 2 hears of it live and refuses it naming till 1 and when; an override is journaled and sent', async () => {
    const one = till('front-1');
    const two = till('front-2');
    expect((await one.sync()).ok).toBe(true);
    expect((await two.sync()).ok).toBe(true);
    const sold = await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' });
    // the relay recorded it as the voucher's first use before the till said yes
    expect(sold).toMatchObject({ ok: true, kind: 'issued', source: 'network', journaled: true, claim: 'granted' });
    // sent at once, acknowledged
    await waitFor(async () => {
      const j = await journalOf(one);
      expect(j[0]?.shared).toEqual(expect.any(Number));
      return j;
    });
    // till 2 never synced again: its live long-poll brought the use
    await waitFor(async () => expect((await usesHeard(two, two.dbName))?.uses).toHaveLength(1));
    const again = await two.validateCoupon(CODE, { amount: 32000, orderId: 'B-1' });
    expect(again).toMatchObject({
      ok: false,
      reason: 'used_on_another_till',
      source: 'network', // the API was asked, and still shows the voucher unused
      detail: {
        rule: 'use',
        discount: 3200,
        // (at: when the relay recorded till 1's claim)
        otherUse: { till: 'front-1', at: expect.any(Number), orderId: 'A-1', device: await deviceOf(one, one.dbName) },
      },
    });
    expect(again.detail?.message).toMatch(
      /Till front-1 accepted this issued coupon at \d{4}-\d\d-\d\d \d\d:\d\d.*order A-1.*Ask a manager to check order A-1 at till front-1/,
    );
    expect(again.detail?.message).not.toContain('acceptRepeatUse'); // (a developer's word, not a cashier's next step)
    // the manager overrides: journaled with its override, sent, and the relay answers that it conflicts with till 1's
    const overridden = await two.validateCoupon(CODE, { amount: 32000, orderId: 'B-2', acceptRepeatUse: true });
    expect(overridden).toMatchObject({ ok: true, overrides: ['repeat_use'], journaled: true });
    const override = await waitFor(async () => {
      const e = (await journalOf(two)).find((x) => x.orderId === 'B-2');
      expect(e?.shared).toEqual(expect.any(Number));
      return e!;
    });
    // (an override is a second sale knowingly: sent as a use, not claimed)
    expect(override).toMatchObject({
      overrides: ['repeat_use'],
      claim: null,
      conflict: { till: 'front-1', at: again.ok ? 0 : again.detail.otherUse!.at, orderId: 'A-1', first: true },
    });
    await waitFor(async () => {
      const heard = await usesHeard(one, one.dbName);
      expect(heard?.uses.find((u) => u.orderId === 'B-2')).toMatchObject({
        till: 'front-2',
        override: true,
        conflict: true,
      });
    });
  });

  it('two online tills asked for one voucher at the same moment: exactly one says yes, the relay decides', async () => {
    const gate = claimGate();
    const one = till('front-1', { fetch: gate.fn });
    const two = till('front-2', { fetch: gate.fn });
    await one.sync();
    await two.sync();
    // both read the voucher (unused, heard of no use) and ask the relay at once: their claims meet there
    const asked = [
      one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' }),
      two.validateCoupon(CODE, { amount: 32000, orderId: 'B-1' }),
    ];
    // (a till that asked the relay nothing answers by itself: then both say yes, which is what this guards against)
    const bothHeld = expect.poll(() => gate.held(), { timeout: 15_000 }).toBe(2);
    await Promise.race([bothHeld, Promise.all(asked)]);
    bothHeld.catch(() => undefined);
    gate.release();
    const verdicts = await Promise.all(asked);
    const yes = verdicts.filter((v) => v.ok);
    expect(yes).toHaveLength(1);
    expect(yes[0]).toMatchObject({ ok: true, claim: 'granted' });
    const [winner, loser] = verdicts[0]!.ok ? [one, two] : [two, one];
    const refused = verdicts.find((v) => !v.ok)!;
    expect(refused).toMatchObject({
      ok: false,
      reason: 'used_on_another_till',
      claim: 'refused',
      journaled: true,
      detail: { rule: 'use', discount: 3200, otherUse: { till: winner === one ? 'front-1' : 'front-2' } },
    });
    // the loser journals the refusal it gave, remembers no use of its own and sends none
    expect((await journalOf(loser))[0]).toMatchObject({ ok: false, reason: 'used_on_another_till', claim: 'refused' });
    expect(await peek(loser.idb, loser.dbName, (db) => db.outbox.count())).toBe(0);
    expect(await peek(loser.idb, loser.dbName, (db) => db.tillUses.count())).toBe(0);
    expect((await journalOf(winner))[0]).toMatchObject({ ok: true, claim: 'granted', shared: expect.any(Number) });
    // the relay holds one use of it: the winner's
    await winner.sync();
    expect((await usesHeard(winner, winner.dbName))?.uses).toHaveLength(1);
  });

  it('a relay that does not answer the claim in time: the till decides by its own rules, says so, and sends the use as any other', async () => {
    const gate = claimGate();
    const one = till('front-1', { fetch: gate.fn, claimTimeoutMs: 200 });
    await one.sync();
    const v = await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' });
    expect(v).toMatchObject({ ok: true, source: 'network', claim: 'timeout', journaled: true });
    expect((await journalOf(one))[0]).toMatchObject({ ok: true, claim: 'timeout' });
    gate.release();
    // (the claim was given up: the use goes as a plain one, and is acknowledged)
    await waitFor(async () => expect((await journalOf(one))[0]?.shared).toEqual(expect.any(Number)));
    expect((await usesHeard(one, one.dbName))?.uses.map((u) => u.till)).toEqual(['front-1']);
  });

  it('a voided sale gives its voucher back: released on its till, every till hears it, the next sale is a plain yes', async () => {
    const one = till('front-1');
    const two = till('front-2');
    await one.sync();
    await two.sync();
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({ ok: true });
    await waitFor(async () => expect((await usesHeard(two, two.dbName))?.uses).toHaveLength(1));
    // the sale is voided at till 1
    const released = await one.releaseCoupon(` ${CODE}\u200b`, { orderId: 'A-1' });
    expect(released).toMatchObject({ code: CODE, orderId: 'A-1', released: 1, journalIds: [expect.any(Number)] });
    // journaled: the use says it was released, the release is an entry of its own (no sale), sent to the relay
    await waitFor(async () => {
      const [use, release] = await journalOf(one);
      expect(use).toMatchObject({ ok: true, action: 'verdict', released: expect.any(Number) });
      expect(release).toMatchObject({
        id: released.journalIds[0],
        action: 'release',
        ok: false,
        reason: null,
        discount: null,
        orderId: 'A-1',
        amount: 32000,
        shared: expect.any(Number),
      });
    });
    // every till hears it like a use: the voucher's uses are gone from till 2's copy
    await waitFor(async () => expect(await usesHeard(two, two.dbName)).toBeUndefined());
    // the next sale, at either till, is a plain yes (no override, no manager)
    expect(await two.validateCoupon(CODE, { amount: 32000, orderId: 'B-1' })).toMatchObject({
      ok: true,
      claim: 'granted',
    });
    // nothing left to release for that order; another till cannot release till 2's sale
    expect(await one.releaseCoupon(CODE, { orderId: 'A-1' })).toMatchObject({ released: 0, journalIds: [] });
    await expect(one.releaseCoupon(CODE, {} as never)).rejects.toMatchObject({ code: 'bad_request' });
  });

  it('a release made offline waits in the outbox and is sent when the till is back; one the relay refuses says release_refused', async () => {
    const link = switchable();
    const idb = new IDBFactory();
    const one = till('front-1', { fetch: link.fn, indexedDB: idb });
    const two = till('front-2');
    await one.sync();
    await two.sync();
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({ ok: true });
    await waitFor(async () => expect((await usesHeard(two, two.dbName))?.uses).toHaveLength(1));
    link.off = true;
    expect((await one.sync()).ok).toBe(false);
    expect(await one.releaseCoupon(CODE, { orderId: 'A-1' })).toMatchObject({ released: 1 });
    // offline, the till itself passes the voucher again at once; the relay has not heard yet
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-2' })).toMatchObject({
      ok: true,
      source: 'local',
    });
    expect((await usesHeard(two, two.dbName))?.uses).toHaveLength(1);
    link.off = false;
    expect((await one.sync()).ok).toBe(true);
    // the release reached the relay after the uses: A-1's use is gone, A-2's (offline) is the voucher's one use
    await waitFor(async () => expect((await usesHeard(two, two.dbName))?.uses.map((u) => u.orderId)).toEqual(['A-2']));
    // the same database under another till's name (a token handed to another till): it may not give back front-1's use
    await one.close();
    const renamed = till('front-9', { indexedDB: idb, dbName: one.dbName });
    expect(await renamed.releaseCoupon(CODE, { orderId: 'A-2' })).toMatchObject({ released: 1 });
    const report = await renamed.sync();
    expect(report.errors.map((e) => e.code)).toContain('release_refused');
    expect(report.errors.find((e) => e.code === 'release_refused')?.message).toMatch(/another till's name/);
    expect((await usesHeard(two, two.dbName))?.uses.map((u) => u.orderId)).toEqual(['A-2']);
  });

  it('a relay that restarted and forgot every use hears them again from the till that holds them: the next till is refused', async () => {
    const one = till('front-1');
    await one.sync();
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({
      ok: true,
      claim: 'granted',
    });
    await waitFor(async () => expect((await journalOf(one))[0]?.shared).toEqual(expect.any(Number)));
    const handle = (await relay.status()).handle;
    // the relay (its memory store) restarts: a new feed, no use
    await relay.close();
    await startRelay();
    expect((await relay.status()).handle).not.toBe(handle);
    expect(await relay.listUses()).toEqual([]);
    // till 1 finds the new feed (its next sync, or its live long-poll) and sends its use again
    expect((await one.sync()).ok).toBe(true);
    await waitFor(async () =>
      expect((await relay.listUses()).map((r) => r.uses.map((u) => u.orderId))).toEqual([['A-1']]),
    );
    // a till that never heard of the sale asks for the voucher: the relay says no
    const three = till('front-3');
    await three.sync();
    expect(await three.validateCoupon(CODE, { amount: 32000, orderId: 'C-1' })).toMatchObject({
      ok: false,
      reason: 'used_on_another_till',
      detail: { otherUse: { till: 'front-1', orderId: 'A-1' } },
    });
  });

  it('offline: till 2 refuses from what it last heard', async () => {
    const one = till('front-1');
    const two = till('front-2');
    await one.sync();
    expect((await two.prefetchIssuedCoupons([CODE])).ok).toBe(true);
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({ ok: true });
    await waitFor(async () => expect((await usesHeard(two, two.dbName))?.uses).toHaveLength(1));
    down = true;
    expect((await two.sync()).ok).toBe(false);
    const offline = await two.validateCoupon(CODE, { amount: 32000, orderId: 'B-1' });
    expect(offline).toMatchObject({
      ok: false,
      reason: 'used_on_another_till',
      source: 'local',
      journaled: true,
      detail: { otherUse: { till: 'front-1', orderId: 'A-1' } },
    });
  });

  it("counts another till's order of the same id as another sale: tills that number receipts separately", async () => {
    const one = till('front-1');
    const two = till('front-2');
    await one.sync();
    expect((await two.prefetchIssuedCoupons([CODE])).ok).toBe(true);
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: '1001' })).toMatchObject({ ok: true });
    await waitFor(async () => expect((await usesHeard(two, two.dbName))?.uses).toHaveLength(1));
    down = true;
    expect((await two.sync()).ok).toBe(false);
    // till 2's own order 1001 is another sale than till 1's order 1001
    expect(await two.validateCoupon(CODE, { amount: 32000, orderId: '1001' })).toMatchObject({
      ok: false,
      reason: 'used_on_another_till',
      source: 'local',
      detail: { otherUse: { till: 'front-1', orderId: '1001' } },
    });
    // (till 1 checking its own order 1001 again is the same sale)
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: '1001' })).toMatchObject({ ok: true });
  });

  it('two offline tills that both accepted a voucher both see the conflict once they are back, in status() and the journal', async () => {
    const one = till('front-1');
    const two = till('front-2');
    for (const t of [one, two]) {
      expect((await t.sync()).ok).toBe(true);
      expect((await t.prefetchIssuedCoupons([CODE])).ok).toBe(true);
    }
    down = true;
    for (const t of [one, two]) expect((await t.sync()).ok).toBe(false);
    const first = await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' });
    const second = await two.validateCoupon(CODE, { amount: 32000, orderId: 'B-1' });
    for (const v of [first, second]) expect(v).toMatchObject({ ok: true, source: 'local', journaled: true });
    expect((await journalOf(one))[0]).toMatchObject({ shared: null, conflict: null });
    down = false;
    expect((await one.sync()).ok).toBe(true);
    expect((await two.sync()).ok).toBe(true);
    const [a] = await journalOf(one);
    const [b] = await journalOf(two);
    expect(a!.shared).toEqual(expect.any(Number));
    // till 2 sold later: the relay's answer named till 1's sale
    // (till 1's sale is the first: it keeps the voucher)
    expect(b).toMatchObject({
      shared: expect.any(Number),
      conflict: { till: 'front-1', at: a!.at, orderId: 'A-1', first: true },
    });
    // till 1 hears of it from the feed (its next sync, or its live long-poll)
    await one.sync();
    expect((await journalOf(one))[0]).toMatchObject({
      conflict: { till: 'front-2', at: b!.at, orderId: 'B-1', first: false },
    });
    for (const [t, e, other] of [
      [one, a!, 'front-2'],
      [two, b!, 'front-1'],
    ] as const) {
      const s = await next(t.status(), (x) => x.useConflicts !== undefined);
      expect(s.useConflicts).toMatchObject({
        count: 1,
        newest: { journalId: e.id, journalKey: e.key, code: CODE, orderId: e.orderId, conflict: { till: other } },
      });
    }
    // a reconciled journal has no conflict left to show
    await two.clearOfflineJournal(b!.id);
    await next(two.status(), (x) => x.useConflicts === undefined);
  });

  it('sends a use again when the answer was lost, and the relay records it once', async () => {
    const f = usesFetch();
    const one = till('front-1', { fetch: f.fn });
    const two = till('front-2');
    await one.sync();
    await two.sync();
    f.dropNextAnswer();
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({ ok: true });
    // sent at once, its answer lost: the retry unit sends it again
    const [entry] = await waitFor(async () => {
      const j = await journalOf(one);
      expect(j[0]?.shared).toEqual(expect.any(Number));
      return j;
    });
    // the first request reached the relay (its answer did not reach the till); the second is the resend
    expect(f.posts.map((p) => p.body.uses.map((u) => u.entry))).toEqual([[entry!.key], [entry!.key]]);
    expect(f.posts.map((p) => p.answer?.uses[0]?.recorded ?? 'lost')).toEqual(['lost', false]);
    await two.sync();
    expect((await usesHeard(two, two.dbName))?.uses.map((u) => u.entry)).toEqual([entry!.key]);
  });

  it('keeps unsent uses across a reload and sends them, under the same device', async () => {
    const idb = new IDBFactory();
    const first = till('front-1', { indexedDB: idb });
    expect((await first.prefetchIssuedCoupons([CODE])).ok).toBe(true);
    down = true;
    expect(await first.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({
      ok: true,
      source: 'local',
      journaled: true,
    });
    const device = await deviceOf(first, first.dbName);
    expect(device).toMatch(/^[0-9a-f]{32}$/);
    await first.close();
    expect(await peek(idb, first.dbName, (db) => db.outbox.count())).toBe(1);
    down = false;
    const f = usesFetch();
    const again = till('front-1', { indexedDB: idb, dbName: first.dbName, fetch: f.fn });
    // (its start sync sends what waits)
    await waitFor(async () => expect((await journalOf(again))[0]?.shared).toEqual(expect.any(Number)));
    expect(f.posts[0]?.body.device).toBe(device);
    expect(await deviceOf(again, first.dbName)).toBe(device);
    expect(await peek(idb, first.dbName, (db) => db.outbox.count())).toBe(0);
  });

  it('makes a new device after clear(), and still sends the kept uses under the device that accepted them', async () => {
    const f = usesFetch();
    const one = till('front-1', { fetch: f.fn });
    expect((await one.prefetchIssuedCoupons([CODE])).ok).toBe(true);
    down = true;
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({ ok: true });
    const before = await deviceOf(one, one.dbName);
    await one.clear();
    down = false;
    expect(await deviceOf(one, one.dbName)).toBeUndefined();
    expect((await one.sync()).ok).toBe(true);
    expect(f.posts.map((p) => p.body.device)).toEqual([before]);
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-2' })).toMatchObject({
      ok: false,
      reason: 'used_on_this_till',
    });
    // the kept use is this till's own, not another till's, although its device is the old one
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-2', acceptRepeatUse: true })).toMatchObject({
      ok: true,
      overrides: ['repeat_use'],
    });
    await waitFor(() => expect(f.posts).toHaveLength(2));
    const after = await deviceOf(one, one.dbName);
    expect(after).toMatch(/^[0-9a-f]{32}$/);
    expect(after).not.toBe(before);
    expect(f.posts[1]!.body).toMatchObject({ device: after, uses: [{ override: true }] });
  });

  it('a voucher the API shows used, sold again by a till that was offline: both journals show the double sale', async () => {
    await relay.close();
    await startRelay({ itemCacheMs: 0 }); // (the relay answers the item from the API, not from its last answer)
    const link = switchable();
    const one = till('front-1');
    const two = till('front-2', { fetch: link.fn });
    await one.sync();
    expect((await two.prefetchIssuedCoupons([CODE])).ok).toBe(true);
    link.off = true; // till 2 goes offline before it hears of anything
    expect((await two.sync()).ok).toBe(false);
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({ ok: true });
    await waitFor(async () => expect((await journalOf(one))[0]?.shared).toEqual(expect.any(Number)));
    // the shop's order system records the sale; till 1 checks the voucher again: the API's word, used
    const open = mock.data.issuedCoupons.find((c) => c.coupon_issue_code === CODE)!;
    mock.upsertIssuedCoupon({ ...open, use_date: '2026-11-27 10:00:00', shop_order_code: 'A-1' });
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-2' })).toMatchObject({
      ok: false,
      reason: 'inactive',
    });
    // the relay keeps a mark of the sale the API shows
    await waitFor(async () => expect((await usesHeard(one, one.dbName))?.uses).toHaveLength(1));
    // till 2, still offline, sells it too; back online it sends the use
    expect(await two.validateCoupon(CODE, { amount: 32000, orderId: 'B-1' })).toMatchObject({
      ok: true,
      source: 'local',
    });
    link.off = false;
    expect((await two.sync()).ok).toBe(true);
    const [b] = await journalOf(two);
    expect(b).toMatchObject({ conflict: { till: 'front-1', orderId: 'A-1' } });
    await one.sync();
    expect((await journalOf(one)).find((e) => e.orderId === 'A-1')).toMatchObject({
      conflict: { till: 'front-2', orderId: 'B-1' },
    });
  });

  it('says uses_full, never network_error, when the relay keeps no more uses: in the sync report and status()', async () => {
    await relay.close();
    await startRelay({ maxUses: 1 });
    const open = mock.data.issuedCoupons.find((c) => c.coupon_issue_code === CODE)!;
    mock.upsertIssuedCoupon({ ...open, coupon_issue_code: 'IC-0000-TWO' });
    const one = till('front-1');
    const two = till('front-2');
    await one.sync();
    await two.sync();
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({ ok: true });
    await waitFor(async () => expect((await journalOf(one))[0]?.shared).toEqual(expect.any(Number)));
    // (its claim met the full store: the till's own rules decide, and the verdict says the claim failed)
    expect(await two.validateCoupon('IC-0000-TWO', { amount: 32000, orderId: 'B-1' })).toMatchObject({
      ok: true,
      claim: 'failed',
    });
    const report = await two.sync();
    expect(report.errors.map((e) => e.code)).toContain('uses_full');
    expect(report.errors.find((e) => e.code === 'uses_full')?.message).toMatch(/keeps at most 1 uses/);
    const s = await next(two.status(), (x) => x.lastError !== null && x.phase !== 'syncing');
    expect(s.lastError).toMatchObject({ code: 'uses_full', status: 503 });
    expect(s.lastError?.message).not.toMatch(/Could not reach/);
  });

  it("says till_uses_full when this till holds its share of the relay's uses; another till is not refused", async () => {
    await relay.close();
    await startRelay({ maxUsesPerTill: 1 });
    const open = mock.data.issuedCoupons.find((c) => c.coupon_issue_code === CODE)!;
    mock.upsertIssuedCoupon({ ...open, coupon_issue_code: 'IC-0000-TWO' });
    const one = till('front-1');
    const two = till('front-2');
    await one.sync();
    expect(await one.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({ claim: 'granted' });
    expect(await one.validateCoupon('IC-0000-TWO', { amount: 32000, orderId: 'A-2' })).toMatchObject({
      ok: true,
      claim: 'failed',
    });
    const report = await one.sync();
    expect(report.errors.find((e) => e.code === 'till_uses_full')).toMatchObject({ status: 429 });
    expect(report.errors.find((e) => e.code === 'till_uses_full')?.message).toMatch(
      /till front-1 holds its whole share/,
    );
    await two.sync();
    expect(await two.validateCoupon('IC-0000-TWO', { amount: 32000, orderId: 'B-1' })).toMatchObject({
      ok: true,
      claim: 'granted',
    });
  });

  it('shares nothing with a relay that does not take uses from this till, nor without a relay', async () => {
    await relay.close();
    // this relay lets tills read the feed and the items, but takes no uses
    await startRelay({ public: false, authorize: (_req, route) => route !== 'uses' });
    const f = usesFetch();
    const onRelay = till('front-1', { fetch: f.fn });
    expect((await onRelay.sync()).ok).toBe(true);
    expect(await onRelay.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({
      ok: true,
      journaled: true,
    });
    expect((await onRelay.sync()).ok).toBe(true);
    expect(f.posts).toEqual([]);
    expect((await journalOf(onRelay))[0]).toMatchObject({ shared: null });

    const direct = usesFetch();
    const alone = lookupFor(mock, { fetch: direct.fn });
    tills.push(alone);
    expect((await alone.sync()).ok).toBe(true);
    expect(await alone.validateCoupon(CODE, { amount: 32000, orderId: 'A-1' })).toMatchObject({
      ok: true,
      journaled: true,
    });
    expect((await alone.sync()).ok).toBe(true);
    expect(direct.posts).toEqual([]);
    expect((await alone.offlineJournal())[0]).toMatchObject({ shared: null, conflict: null });
  });

  it('sends the uses a database of schema version 6 holds, with what their journal entries say', async () => {
    const idb = new IDBFactory();
    const v6 = new Dexie('till-v6', { indexedDB: idb, IDBKeyRange });
    v6.version(1).stores({
      coupons: 'coupon_code',
      issuedCoupons: '',
      options: '[product_no+no], [product_no+code]',
      meta: 'key',
      couponStage: 'coupon_code',
      couponPages: 'page',
    });
    v6.version(2).stores({ journal: '++id, at' });
    v6.version(3).stores({ couponHashes: 'page', listedPages: 'page, &*codes', couponPages: null });
    v6.version(5).stores({ feedStage: '[resource+key]' });
    v6.version(6).stores({ journal: '++id, at, &key', tillUses: 'key, code' });
    const key = 'ab'.repeat(16);
    const sold: Omit<JournalEntry, 'id' | 'shared' | 'conflict' | 'claim' | 'action' | 'released'> = {
      key,
      code: CODE,
      amount: 32000,
      ok: true,
      reason: null,
      discount: 3200,
      syncedAt: 1,
      at: 1_800_000_000_000,
      kind: 'issued',
      couponCode: 'WELCOME10',
      orderId: 'V6-1',
      orderAt: 1_800_000_000_000,
      source: 'local',
      cause: 'offline',
      overrides: ['repeat_use'],
    };
    const id = (await v6.table('journal').add(sold)) as number;
    await v6
      .table('tillUses')
      .put({ key, code: CODE, journalId: id, at: sold.at, orderId: 'V6-1', orderAt: sold.orderAt, amount: 32000 });
    v6.close();

    const f = usesFetch();
    const one = till('front-1', { indexedDB: idb, dbName: 'till-v6', fetch: f.fn });
    await waitFor(async () => expect((await one.offlineJournal())[0]?.shared).toEqual(expect.any(Number)));
    expect(f.posts[0]!.body.uses).toEqual([
      { entry: key, code: CODE, couponCode: 'WELCOME10', orderId: 'V6-1', at: sold.at, override: true },
    ]);
    expect(f.posts[0]!.body.device).toBe(await deviceOf(one, 'till-v6'));
    expect((await idb.databases()).find((d) => d.name === 'till-v6')?.version).toBe(70);
  });
});
