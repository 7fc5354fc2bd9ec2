// The till's credential (`token`): engines against the relay with till tokens (the relay command's till access, in
// front of the real mock API). Every request carries `Authorization: Bearer <token>` (this thread's engine, a worker's
// over Comlink, a follower tab's read-through); a function is asked once, and again once after a 401; a wrong token
// is `forbidden`, never offline; the token is in no table of IndexedDB and in nothing the engine reports.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '@shop-lookup/mock-server';
import { createShopRelay } from '@shop-lookup/relay';
import { createTillAccess } from '../../relay/src/server/tillAccess';
import { createTillTokens } from '../../relay/src/server/tillTokens';
import type { ShopLookup, ShopLookupOptions } from '../src';
import { dumpDatabase, KEY, lookupFor, lookupWithEngine, next, SECRET, startMock } from './utils';

const SHOP = 'token-shop';
const GOOD = 'till-token-front-1-0a1b2c3d4e5f';
const NEXT = 'till-token-front-1-signed-in-again-9f8e';
const WRONG = 'till-token-nobody-knows-this-one-77';

describe('the till token (`token`)', () => {
  let mock: MockShopApi;
  let server: Server;
  let relay: ReturnType<typeof createShopRelay>;
  let base: string;
  let tokens: ReturnType<typeof createTillTokens>;
  /** The Authorization header of every request the relay got, by path. */
  let seen: { path: string; authorization: string | undefined; status?: number }[];
  const tills: ShopLookup[] = [];
  const disposers: (() => void)[] = [];
  const till = (options: Partial<ShopLookupOptions>, idb = new IDBFactory()) => {
    const t = lookupFor({ url: base }, { auth: undefined, shopId: SHOP, indexedDB: idb, ...options });
    tills.push(t);
    return t;
  };

  beforeEach(async () => {
    mock = await startMock();
    tokens = createTillTokens({ entries: [{ name: 'front-1', token: GOOD }], shop: SHOP });
    // (an OPS_TOKEN: else this machine, the tests' loopback, may read the relay's status, and a till without a valid
    // token would still be let into the discovery answer)
    const access = createTillAccess({
      tokens,
      storefrontOpen: false,
      public: false,
      opsToken: 'ops-token-0123456789',
      trustProxyHops: 0,
    });
    relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      shopId: SHOP,
      authorize: access.authorize,
      clientId: access.clientId,
      // (a till with a wrong token is refused several times in a row here: the bound on refusals is another test's)
      clientLimits: { refusedPerMinute: 1000 },
      rateLimits: false,
      refreshIntervalMs: 60 * 60 * 1000,
    });
    seen = [];
    server = createServer((req: IncomingMessage, res) => {
      const entry: (typeof seen)[number] = {
        path: new URL(req.url!, 'http://x').pathname,
        authorization: req.headers.authorization,
      };
      seen.push(entry);
      res.once('finish', () => (entry.status = res.statusCode));
      relay(req, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/shop-api`;
    await relay.refresh();
  });

  afterEach(async () => {
    for (const t of tills.splice(0)) await t.close();
    for (const dispose of disposers.splice(0)) dispose();
    await relay.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await mock.close();
  });

  it('sends the token with every request: discovery, the feed, a read-through; the till syncs from the feed', async () => {
    const t = till({ token: GOOD });
    const report = await t.sync();
    expect(report).toMatchObject({ ok: true });
    expect(await next(t.status(), (s) => s.source !== undefined)).toMatchObject({
      source: 'relay',
      online: true,
      lastError: null,
    });
    // an issued coupon is never in the feed: it is read through by its GET route
    expect((await next(t.issuedCoupon(MOCK_CODES.issuedUnused), (r) => r.syncedAt !== null)).data).not.toBeNull();
    const paths = new Set(seen.map((r) => r.path));
    expect([...paths]).toEqual(
      expect.arrayContaining([
        '/shop-api/relay/v1',
        '/shop-api/relay/v1/feed',
        `/shop-api/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`,
      ]),
    );
    expect(seen.filter((r) => r.authorization !== `Bearer ${GOOD}`)).toEqual([]);
  });

  it('asks a token function once, and again once when the relay answers 401: a till signed in again goes on with its new token', async () => {
    let current = GOOD;
    let asks = 0;
    const t = till({
      token: async () => {
        asks++;
        return current;
      },
    });
    expect((await t.sync()).ok).toBe(true);
    expect(await t.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32_000 })).toMatchObject({ ok: true });
    expect(asks).toBe(1);

    // the shop revokes the old token; the till signed in again and got another one
    tokens.replaceEntries([{ name: 'front-1', token: NEXT }]);
    current = NEXT;
    seen = [];
    mock.upsertCoupon({
      ...mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!,
      name: 'signed in again',
    });
    await relay.refresh();
    const report = await t.sync();
    expect(report).toMatchObject({ ok: true, errors: [] });
    expect(asks).toBe(2);
    // the refused request went once more, with the new token, and so did every later one (a long-poll parked before
    // the token was revoked may still be answered with the old one)
    const refused = seen.filter((r) => r.status === 401);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((r) => r.authorization === `Bearer ${GOOD}`)).toBe(true);
    const renewed = seen.findIndex((r) => r.authorization === `Bearer ${NEXT}`);
    expect(renewed).toBeGreaterThan(seen.indexOf(refused[0]!));
    expect(seen.slice(renewed).every((r) => r.authorization === `Bearer ${NEXT}` && r.status !== 401)).toBe(true);
    expect((await next(t.coupon(MOCK_CODES.welcomeCoupon), (r) => r.data?.name === 'signed in again')).offline).toBe(
      false,
    );
  });

  it('shows a wrong token as forbidden, in the status and the verdicts, never as offline; the function is asked again once per refusal', async () => {
    let asks = 0;
    let current = WRONG;
    const t = till({
      token: () => {
        asks++;
        return current;
      },
    });
    const report = await t.sync();
    expect(report.ok).toBe(false);
    expect(report.errors.map((e) => e.code)).toEqual(['forbidden']);
    const status = await next(t.status(), (s) => s.lastError !== null);
    expect(status).toMatchObject({ online: true, lastError: { code: 'forbidden' } });
    expect(status.phase).not.toBe('offline');
    expect(status.lastError!.message).toMatch(
      /^The relay refused this till's token: this till token is not known here; ask the shop for a token of this relay\./,
    );
    const verdict = await t.validateCoupon('NEVER-SYNCED-CODE', { amount: 10_000 });
    expect(verdict).toMatchObject({ ok: false, reason: 'unchecked', detail: { error: { code: 'forbidden' } } });
    const refused = seen.filter((r) => r.authorization === `Bearer ${WRONG}`).length;
    expect(refused).toBeGreaterThan(1);
    // each refused request asked once more, and was sent once more only when the answer was another token (never here)
    expect(asks).toBe(1 + refused);
    expect(seen.every((r) => r.authorization === `Bearer ${WRONG}`)).toBe(true);

    // the till signs in: the next sync's refused request asks again, and the feed of the relay it found is read
    current = GOOD;
    expect(await t.sync()).toMatchObject({ ok: true, errors: [] });
    expect(await next(t.status(), (s) => s.lastError === null)).toMatchObject({ source: 'relay', online: true });
  });

  it('sends no Authorization when the token function throws; the refusal is forbidden', async () => {
    const t = till({
      token: () => {
        throw new Error('this till is not signed in');
      },
    });
    const report = await t.sync();
    expect(report.errors.map((e) => e.code)).toEqual(['forbidden']);
    expect(report.errors[0]!.message).toMatch(/send Authorization: Bearer <till token>/);
    expect(seen.every((r) => r.authorization === undefined)).toBe(true);
  });

  it('keeps the token out of IndexedDB (every table of the database) and out of the status, reports and verdicts', async () => {
    const idb = new IDBFactory();
    const t = till({ token: () => GOOD, dbName: 'token-kept-nowhere' }, idb);
    const told: unknown[] = [await t.sync()];
    t.status().subscribe((s) => told.push(s));
    told.push(await t.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32_000 }));
    told.push(await t.validateCoupon('NOT-A-CODE', { amount: 32_000 }));
    told.push(await next(t.issuedCoupon(MOCK_CODES.issuedUnused), (r) => r.syncedAt !== null));
    told.push(await t.offlineJournal());
    const dump = await dumpDatabase(idb, 'token-kept-nowhere');
    expect(dump).toContain(MOCK_CODES.welcomeCoupon); // the database is the one the till synced into
    expect(dump).not.toContain(GOOD);
    expect(JSON.stringify(told)).not.toContain(GOOD);
  });

  it("a worker's engine asks the page's function over Comlink, and a follower tab sends the token with its own read-through", async () => {
    let asked = 0;
    const token = async () => {
      asked++;
      return GOOD;
    };
    const worker = lookupWithEngine({ url: base }, {}, { auth: undefined, shopId: SHOP, token });
    tills.push(worker);
    disposers.push(worker.dispose);
    expect((await worker.sync()).ok).toBe(true);
    expect(asked).toBe(1);

    // two tabs on one database: the second follows, and reads an issued coupon through by itself
    const shared = new IDBFactory();
    const leader = till({ token: GOOD, dbName: 'token-tabs' }, shared);
    await next(leader.status(), (s) => s.lastSyncedAt.coupons !== null);
    const follower = till({ token: GOOD, dbName: 'token-tabs' }, shared);
    expect((await next(follower.status())).leader).toBe(false);
    seen = [];
    expect(
      (await next(follower.issuedCoupon(MOCK_CODES.issuedUnused), (r) => r.syncedAt !== null)).data,
    ).not.toBeNull();
    expect(seen.map((r) => r.path)).toContain(`/shop-api/v2/shop/issue-coupons/${MOCK_CODES.issuedUnused}`);
    expect(seen.filter((r) => r.authorization !== `Bearer ${GOOD}`)).toEqual([]);
  });

  it('refuses a token that is neither a string nor a function', () => {
    expect(() => till({ token: 42 as unknown as string })).toThrow(/option "token" must be the till's token/);
  });
});
