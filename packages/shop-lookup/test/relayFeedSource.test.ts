// The till side of the feed protocol against hand-written protocol answers (packages/relay/PROTOCOL.md): parsing and
// applying, resuming a snapshot, staging after "start again". The behaviour against the real relay is proven in
// packages/shop-lookup/test/tillsOnRelay.test.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadFeedState } from '../worker/store/feedState';
import { createRelayFeedClient } from '../worker/sync/relay/relayFeedClient';
import { createRelayFeedSource } from '../worker/sync/relay/relayFeedSource';
import { createSourceChooser, probeRelay } from '../worker/sync/relay/relayDiscovery';
import { openStore, type ShopDatabase } from '../worker/store/store';
import type { SyncContext } from '../worker/sync/syncContext';
import { createReportDraft } from '../worker/sync/syncReport';
import { createCouponValidator } from '../worker/coupon/validateCoupon';
import { planLookup } from '../worker/lookups/lookupPlans';
import { readLocal } from '../worker/lookups/readLocal';

type Handler = (url: URL, req: IncomingMessage, res: ServerResponse) => void;

/** An HTTP server on 127.0.0.1 that answers with `handler` and records every request URL. */
async function scripted(handler: Handler): Promise<{ url: string; seen: URL[]; server: Server; handler: Handler }> {
  const seen: URL[] = [];
  const s = { url: '', seen, server: null as unknown as Server, handler };
  s.server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    seen.push(url);
    s.handler(url, req, res);
  });
  await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
  s.url = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
  return s;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const coupon = (code: string, name = code) => ({ resource: 'coupons', key: code, record: { coupon_code: code, name } });
const answer = (o: Record<string, unknown>) => ({
  cursor: null,
  deletes: [],
  more: false,
  products: [],
  confirmedAt: { coupons: 1000 },
  ...o,
});

/** validateCoupon on this database, offline: only what is stored decides. */
const offlineCheckout = (db: ShopDatabase) =>
  createCouponValidator({
    db,
    now: Date.now,
    isOffline: () => true,
    refreshCoupon: () => Promise.reject(new Error('offline')),
    refreshIssuedCoupon: () => Promise.reject(new Error('offline')),
    options: { refreshIntervalMs: 300_000 },
  });
/** What coupon(code) shows: its syncedAt, and why it is unconfirmed (if it is). */
const shown = async (db: ShopDatabase, code: string) => {
  const local = await readLocal(planLookup({ kind: 'coupon', code }), db);
  return { syncedAt: local.syncedAt, unreadable: local.unreadable !== undefined };
};

function contextFor(db: ShopDatabase): SyncContext {
  return {
    db,
    client: null as never,
    report: createReportDraft(),
    now: Date.now,
    priority: 'background',
    call: (step) => step(),
  };
}

describe('relay discovery', () => {
  it('takes a relay answer for a relay, anything else for a plain API, and asks again after no answer', async () => {
    const server = await scripted((url, _req, res) =>
      url.pathname === '/relay/v1'
        ? json(res, 200, { relay: 'shop-lookup', protocol: 1, shop: 's1', feed: 'relay/v1/feed' })
        : json(res, 404, {}),
    );
    expect(await probeRelay(fetch, server.url, 2000)).toMatchObject({ kind: 'relay', info: { shop: 's1' } });
    server.handler = (_url, _req, res) => json(res, 404, { code: -98, msg: 'no such service' });
    expect(await probeRelay(fetch, server.url, 2000)).toMatchObject({ kind: 'direct' });
    server.handler = (_url, _req, res) => res.end('<html>not found</html>');
    expect(await probeRelay(fetch, server.url, 2000)).toMatchObject({ kind: 'direct' });
    await new Promise((r) => server.server.close(r));

    let asked = 0;
    const chooser = createSourceChooser('auto', async () =>
      ++asked === 1
        ? { kind: 'unknown', error: Object.assign(new Error('refused'), { code: 'network_error' }) as never }
        : { kind: 'relay', info: null },
    );
    await expect(chooser.choose()).rejects.toMatchObject({ code: 'network_error' });
    expect((await chooser.choose()).kind).toBe('relay');
    expect((await chooser.choose()).kind).toBe('relay');
    expect(asked).toBe(2); // cached once answered
    expect((await createSourceChooser('direct', () => Promise.reject(new Error('never asked'))).choose()).kind).toBe(
      'direct',
    );
  });
});

describe('relay feed source (hand-written answers)', () => {
  let db: ShopDatabase;
  let server: Awaited<ReturnType<typeof scripted>>;
  beforeEach(async () => {
    db = openStore(`feed-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange });
  });
  afterEach(async () => {
    db.close();
    await new Promise((r) => server.server.close(r));
  });
  const sourceFor = () =>
    createRelayFeedSource({ db, client: createRelayFeedClient({ baseUrl: server.url, fetch, timeoutMs: 2000 }) });
  const run = (ctx: SyncContext) => ({
    ctx,
    unit: (_key: string, work: () => Promise<void>) => work().then(() => true),
  });

  it('resumes an interrupted snapshot at its cursor, catches up since its first version, then answers 304 with no write', async () => {
    let failCursor2 = true;
    server = await scripted((url, req, res) => {
      const q = url.searchParams;
      if (!q.has('cursor') && !q.has('since'))
        return json(
          res,
          200,
          answer({ handle: 'h1', version: 5, kind: 'snapshot', cursor: 'c2', upserts: [coupon('A'), coupon('B')] }),
        );
      if (q.get('cursor') === 'c2') {
        if (failCursor2) return res.destroy(); // the connection drops: the sync fails here
        return json(
          res,
          200,
          answer({ handle: 'h1', version: 5, kind: 'snapshot', cursor: null, upserts: [coupon('C')] }),
        );
      }
      if (q.get('since') === '5')
        return json(
          res,
          200,
          answer({
            handle: 'h1',
            version: 7,
            kind: 'changes',
            upserts: [coupon('A', 'changed')],
            deletes: [{ resource: 'coupons', key: 'B' }],
          }),
          { etag: '"h1.7.1000"' },
        );
      if (q.get('since') === '7' && req.headers['if-none-match'] === '"h1.7.1000"') {
        res.writeHead(304, { etag: '"h1.7.1000"' });
        return res.end();
      }
      json(res, 500, { code: 'unexpected', message: url.search });
    });
    const source = sourceFor();
    await expect(source.syncAll(run(contextFor(db)), [])).rejects.toMatchObject({ code: 'network_error' });
    expect((await loadFeedState(db)).snapshot).toMatchObject({ handle: 'h1', cursor: 'c2', mode: 'direct' });
    expect(await db.coupons.count()).toBe(2);

    failCursor2 = false;
    server.seen.length = 0;
    const ctx = contextFor(db);
    await source.syncAll(run(ctx), []);
    expect(server.seen.map((u) => u.search)).toEqual(['?cursor=c2&handle=h1&limit=10000', '?since=5&handle=h1']);
    expect((await db.coupons.toArray()).map((c) => [c.coupon_code, c.name])).toEqual([
      ['A', 'changed'],
      ['C', 'C'],
    ]);
    expect(await loadFeedState(db)).toMatchObject({ handle: 'h1', version: 7, etag: '"h1.7.1000"', snapshot: null });
    expect(((await db.meta.get('coupons')) as { confirmedAt: number }).confirmedAt).toBe(1000);

    server.seen.length = 0;
    const again = contextFor(db);
    await source.syncAll(run(again), []);
    expect(server.seen).toHaveLength(1);
    expect(again.report).toMatchObject({ requests: 1, written: 0, deleted: 0 });
  });

  it('builds the new snapshot aside after "start again" and keeps the old data until it is complete', async () => {
    // the new snapshot's catch-up request is held: the promise gives what answers it, once it was asked
    let holdCatchUp: ((reply: () => void) => void) | null = null;
    const catchUpHeld = new Promise<() => void>((resolve) => (holdCatchUp = resolve));
    let handle = 'h1';
    server = await scripted((url, _req, res) => {
      const q = url.searchParams;
      if (!q.has('since'))
        return json(
          res,
          200,
          answer({
            handle,
            version: 3,
            kind: 'snapshot',
            upserts: handle === 'h1' ? [coupon('OLD')] : [coupon('NEW1'), coupon('NEW2')],
          }),
        );
      if (q.get('handle') !== handle) return json(res, 409, { code: 'must_refetch', message: 'start again' });
      const reply = () =>
        json(res, 200, answer({ handle, version: 3, kind: 'changes', upserts: [] }), { etag: `"${handle}.3.1000"` });
      if (handle === 'h2' && holdCatchUp) {
        holdCatchUp(reply);
        holdCatchUp = null;
        return;
      }
      reply();
    });
    const source = sourceFor();
    await source.syncAll(run(contextFor(db)), []);
    expect((await db.coupons.toArray()).map((c) => c.coupon_code)).toEqual(['OLD']);

    handle = 'h2'; // the relay lost its history: 409 to h1
    const syncing = source.syncAll(run(contextFor(db)), []);
    const answerCatchUp = await catchUpHeld; // the new snapshot is staged, its catch-up held
    expect((await db.coupons.toArray()).map((c) => c.coupon_code)).toEqual(['OLD']);
    expect(await db.feedStage.count()).toBe(2);
    answerCatchUp();
    await syncing;
    expect((await db.coupons.toArray()).map((c) => c.coupon_code)).toEqual(['NEW1', 'NEW2']);
    expect(await db.feedStage.count()).toBe(0);
    expect(await loadFeedState(db)).toMatchObject({ handle: 'h2', version: 3, snapshot: null });
  });

  it('a relay restarted empty and not ready yet: the till keeps its data and the sync reports relay_not_ready, nothing unhandled', async () => {
    let restarted = false;
    server = await scripted((url, _req, res) => {
      const q = url.searchParams;
      if (!restarted)
        return q.has('since')
          ? json(res, 200, answer({ handle: 'h1', version: 1, kind: 'changes', upserts: [] }))
          : json(res, 200, answer({ handle: 'h1', version: 1, kind: 'snapshot', upserts: [coupon('KEPT')] }));
      // a new feed whose first listing is not finished: the old handle is refused, a snapshot is not ready
      if (q.has('handle')) return json(res, 409, { code: 'must_refetch', message: 'start again' });
      json(
        res,
        503,
        { code: 'relay_not_ready', message: 'the relay has not finished its first listing' },
        {
          'retry-after': '5',
        },
      );
    });
    // the feed's answer rejects before the stage is cleared (as when IndexedDB is slower than the relay): the
    // rejection must be handled while the till waits on its database (vitest fails the run on an unhandled one)
    const client = createRelayFeedClient({ baseUrl: server.url, fetch, timeoutMs: 2000 });
    let refused = () => {};
    const answered = new Promise<void>((resolve) => (refused = resolve));
    const watched: typeof client = {
      ...client,
      feed: (query, o) => {
        const reply = client.feed(query, o);
        return new Promise((resolve, reject) =>
          reply.then(resolve, (error) => {
            reject(error);
            refused();
          }),
        );
      },
    };
    const clear = db.feedStage.clear.bind(db.feedStage);
    db.feedStage.clear = (async () => {
      await answered;
      await new Promise((resolve) => setImmediate(resolve));
      return clear();
    }) as typeof db.feedStage.clear;
    const source = createRelayFeedSource({ db, client: watched });
    await source.syncAll(run(contextFor(db)), []);
    restarted = true;
    await expect(source.syncAll(run(contextFor(db)), [])).rejects.toMatchObject({ code: 'relay_not_ready' });
    expect((await db.coupons.toArray()).map((c) => c.coupon_code)).toEqual(['KEPT']);
  });

  it("validates the relay's records with the engine's schemas and keeps the good local copy of a rejected one, unconfirmed", async () => {
    let bad = false;
    server = await scripted((url, _req, res) => {
      if (!url.searchParams.has('since'))
        return json(res, 200, answer({ handle: 'h', version: 1, kind: 'snapshot', upserts: [coupon('A')] }));
      if (url.searchParams.get('since') === '1' && bad) {
        return json(
          res,
          200,
          answer({
            handle: 'h',
            version: 2,
            kind: 'changes',
            confirmedAt: { coupons: 2000 },
            upserts: [{ resource: 'coupons', key: 'A', record: { coupon_code: 'A', apply_sale_price: 'lots' } }],
          }),
        );
      }
      json(res, 200, answer({ handle: 'h', version: 1, kind: 'changes', upserts: [] }));
    });
    const source = sourceFor();
    await source.syncAll(run(contextFor(db)), []);
    bad = true;
    const ctx = contextFor(db);
    await source.syncAll(run(ctx), []);
    expect(ctx.report.rejected).toBe(1);
    expect(ctx.report.errors[0]).toMatchObject({ code: 'invalid_record' });
    expect(await db.coupons.get('A')).toMatchObject({ coupon_code: 'A', name: 'A' });
    expect((await loadFeedState(db)).version).toBe(2);
    // the feed's confirmation (2000) does not reach the copy kept: its age is the snapshot's (1000)
    expect(await shown(db, 'A')).toEqual({ syncedAt: 1000, unreadable: true });
    expect(await offlineCheckout(db).validate('A', { amount: 1000, acceptStale: true })).toMatchObject({
      ok: false,
      reason: 'unreadable',
      detail: { rule: 'record' },
    });
  });

  it('stores the records of an answer one of whose upserts is not a record under a resource and key, and reports that one', async () => {
    server = await scripted((url, _req, res) =>
      json(
        res,
        200,
        url.searchParams.has('since')
          ? answer({ handle: 'h', version: 1, kind: 'changes', upserts: [] })
          : answer({
              handle: 'h',
              version: 1,
              kind: 'snapshot',
              upserts: [coupon('A'), null, { key: 'X' }, coupon('B')],
            }),
      ),
    );
    const ctx = contextFor(db);
    await sourceFor().syncAll(run(ctx), []);
    expect((await db.coupons.toArray()).map((c) => c.coupon_code)).toEqual(['A', 'B']);
    expect(ctx.report.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/feed\.upserts\[1\] is not a record under its resource and key/),
      expect.stringMatching(/feed\.upserts\[2\] is not a record under its resource and key/),
    ]);
    expect((await loadFeedState(db)).version).toBe(1);
  });

  it('refuses a feed answer that does not fit the protocol as a bad_response naming the field, and writes nothing', async () => {
    server = await scripted((_url, _req, res) =>
      json(res, 200, answer({ handle: 'h', version: '7', kind: 'snapshot', upserts: [coupon('A')] })),
    );
    const ctx = contextFor(db);
    await expect(sourceFor().syncAll(run(ctx), [])).rejects.toMatchObject({
      code: 'bad_response',
      message: expect.stringMatching(/does not fit the feed protocol \(version: .*relay\/v1\/feed/),
    });
    expect(await db.coupons.count()).toBe(0);
  });

  it('ends the unreadable mark when a readable record comes among many (a chunk of a hundred coupons), as with one', async () => {
    let step = 'snapshot';
    const many = Array.from({ length: 100 }, (_, i) => coupon(`M${String(i).padStart(3, '0')}`));
    server = await scripted((url, _req, res) => {
      if (!url.searchParams.has('since'))
        return json(
          res,
          200,
          answer({ handle: 'h', version: 1, kind: 'snapshot', upserts: [coupon('A'), coupon('B')] }),
        );
      const since = url.searchParams.get('since');
      if (since === '1' && step !== 'snapshot') {
        const bad = (code: string) => ({
          resource: 'coupons',
          key: code,
          record: { coupon_code: code, apply_sale_price: 'lots' },
        });
        return json(
          res,
          200,
          answer({
            handle: 'h',
            version: 2,
            kind: 'changes',
            confirmedAt: { coupons: 2000 },
            upserts: [bad('A'), bad('B')],
          }),
        );
      }
      if (since === '2' && step === 'readable') {
        return json(
          res,
          200,
          answer({
            handle: 'h',
            version: 3,
            kind: 'changes',
            confirmedAt: { coupons: 3000 },
            upserts: [...many.slice(0, 50), coupon('A', 'A again'), ...many.slice(50)],
          }),
        );
      }
      json(res, 200, answer({ handle: 'h', version: Number(since), kind: 'changes', upserts: [] }));
    });
    const source = sourceFor();
    await source.syncAll(run(contextFor(db)), []);
    step = 'unreadable';
    await source.syncAll(run(contextFor(db)), []);
    expect(await shown(db, 'A')).toEqual({ syncedAt: 1000, unreadable: true });
    step = 'readable';
    await source.syncAll(run(contextFor(db)), []);
    expect(await db.coupons.get('A')).toMatchObject({ name: 'A again' });
    expect(await shown(db, 'A')).toEqual({ syncedAt: 3000, unreadable: false });
    expect(await shown(db, 'B')).toEqual({ syncedAt: 1000, unreadable: true }); // not among them: still marked
  });

  it('keeps the good local copy of a record rejected in a new snapshot built aside, unconfirmed until a readable one comes', async () => {
    let handle = 'h1';
    const good = {
      resource: 'coupons',
      key: 'A',
      record: { coupon_code: 'A', name: 'A', status: 'progress', apply_sale_percent: 10 },
    };
    const bad = {
      resource: 'coupons',
      key: 'A',
      record: { coupon_code: 'A', status: 'stop', apply_sale_percent: 'many' },
    };
    const at = { h1: 1000, h2: 2000, h3: 3000 } as Record<string, number>;
    server = await scripted((url, _req, res) => {
      const q = url.searchParams;
      const confirmedAt = { coupons: at[handle] };
      if (!q.has('since'))
        return json(
          res,
          200,
          answer({
            handle,
            version: 1,
            kind: 'snapshot',
            confirmedAt,
            upserts: [handle === 'h2' ? bad : good, coupon(`${handle}-B`)],
          }),
        );
      if (q.get('handle') !== handle) return json(res, 409, { code: 'must_refetch', message: 'start again' });
      json(res, 200, answer({ handle, version: 1, kind: 'changes', confirmedAt, upserts: [] }));
    });
    const source = sourceFor();
    await source.syncAll(run(contextFor(db)), []);
    handle = 'h2'; // the shop stopped A, in a record this till cannot read
    const ctx = contextFor(db);
    await source.syncAll(run(ctx), []);
    expect(ctx.report.rejected).toBe(1);
    expect((await db.coupons.toArray()).map((c) => [c.coupon_code, c.name])).toEqual([
      ['A', 'A'],
      ['h2-B', 'h2-B'],
    ]);
    expect(await shown(db, 'A')).toEqual({ syncedAt: 1000, unreadable: true });
    expect(await shown(db, 'h2-B')).toEqual({ syncedAt: 2000, unreadable: false });
    expect(await offlineCheckout(db).validate('A', { amount: 1000, acceptStale: true })).toMatchObject({
      ok: false,
      reason: 'unreadable',
      coupon: { coupon_code: 'A' },
    });

    handle = 'h3'; // readable again
    await source.syncAll(run(contextFor(db)), []);
    expect(await shown(db, 'A')).toEqual({ syncedAt: 3000, unreadable: false });
    expect(await offlineCheckout(db).validate('A', { amount: 1000, acceptStale: true })).toMatchObject({
      ok: true,
      discount: 100,
    });
  });

  it("has every answer's shop checked before it writes anything of it, on a sync and on a live poll", async () => {
    let shop = 'shop-a';
    server = await scripted((url, _req, res) => {
      const q = url.searchParams;
      if (!q.has('since'))
        return json(res, 200, answer({ shop, handle: 'h', version: 1, kind: 'snapshot', upserts: [coupon('A')] }));
      json(
        res,
        200,
        answer({ shop, handle: 'h', version: 2, kind: 'changes', upserts: [coupon('A', 'changed'), coupon('B')] }),
        { etag: '"h.2.1000"' },
      );
    });
    const named: (string | null)[] = [];
    const source = createRelayFeedSource({
      db,
      client: createRelayFeedClient({ baseUrl: server.url, fetch, timeoutMs: 2000 }),
      async checkShop(name) {
        named.push(name);
        if (name !== 'shop-a') throw Object.assign(new Error(`another shop: ${name}`), { code: 'shop_mismatch' });
      },
    });
    const first = contextFor(db);
    await source.syncAll(run(first), []);
    expect(first.report.complete).toBe(true);
    expect(named).toEqual(['shop-a', 'shop-a']); // the snapshot, and its catch-up
    const before = { coupons: await db.coupons.toArray(), state: await loadFeedState(db) };

    shop = 'shop-b'; // the same address now answers for another shop
    await expect(source.poll(0, new AbortController().signal)).rejects.toMatchObject({ code: 'shop_mismatch' });
    await expect(source.syncAll(run(contextFor(db)), [])).rejects.toMatchObject({ code: 'shop_mismatch' });
    expect({ coupons: await db.coupons.toArray(), state: await loadFeedState(db) }).toEqual(before);
    expect(named.slice(2)).toEqual(['shop-b', 'shop-b']);
  });
});
