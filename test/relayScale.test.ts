// The relay at scale (issue 10, item 7): three relay instances as separate processes on one real Redis, twenty
// engines spread over them, the mock API with its real rate limits (list 1/s, other 5/s). Checked by outcomes that
// hold whichever way the engines reach the relay (the six GET paths, or the feed): upstream list calls per refresh,
// zero 429s, every engine on the same snapshot, no engine ever showing a mix of two snapshots, nothing lost. The
// instances refresh on their own timers (every REFRESH_MS, all three), so the shared lease and the shared
// "confirmed at" are what keep it to one listing per refresh. The interleavings are driven, not waited for: the
// mock holds a page request until the test has killed the lister, and the test changes the API's data only while
// it holds the sync lease itself (no listing under way). The mock runs in its own process: the arrival times its
// rate limits count must not be delayed by the twenty engines working in this one.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockData, type MockRequestRecord, type WireRecord } from '../mock-server';
import { createRedisStore } from '../relay/redisStore';
import type { RelayStore } from '../relay/relayStore';
import { createShopLookup, type ShopLookup } from '../src';
import type { Coupon, LookupResult, SyncStatus } from '../src/types';
import { startRedisServer, type RedisServer } from './redisServer';
import { startChildServer, type ChildServer } from './childProcess';
import type { RelayChildConfig } from './relayChild';
import { next } from './utils';

const SHOP = 'scale';
const BASE_PATH = '/shop-api';
const ENGINES = 20;
const LEASE_MS = 3_000;
const REFRESH_MS = 5_000;
const LIST_PATH = '/v2/shop/coupons';

// Markers that tell the two snapshots apart in any (even partial) list an engine shows.
const PAGE1_CODE_INDEX = 10; // changed in snapshot 2
const PAGE3_CODE_INDEX = 230; // changed in snapshot 2
const GONE_INDEX = 120; // removed in snapshot 2
const NEW_CODE = 'SCALE-NEW'; // added in snapshot 2

let redis: RedisServer;
type RelayProcess = ChildServer<{ port: number; instance: string }> & { instance: string };
/** The mock API, in its own process, steered over its /__mock/ endpoints. */
let api: ChildServer<{ port: number }>;
/** What the mock holds, kept in step here: createMockData() is what the mock starts with (same seed). */
const model = createMockData();
/** The relays' store, as an operator would open it: to hold the sync lease while the test changes the API. */
let operator: RelayStore;
let requests: MockRequestRecord[] = [];
let relays: RelayProcess[] = [];
let config: Omit<RelayChildConfig, 'port'>;
const engines: { lookup: ShopLookup; relay: number; lists: Coupon[][]; statuses: SyncStatus[] }[] = [];
const subscriptions: { unsubscribe(): void }[] = [];
/** confirmedAt.coupons of every committed listing (= when it started), heard on the store's pub/sub channel. */
const confirmations: number[] = [];
let listener: ReturnType<typeof createClient> | undefined;
let reader: ReturnType<typeof createClient> | undefined;
let codes: { page1: string; page3: string; gone: string; s1: { page1: unknown; page3: unknown } };

/** A relay's status route, as an operator (or a test) reads it. */
async function status(relay: RelayProcess): Promise<Record<string, any>> {
  const res = await fetch(`${relay.url}${BASE_PATH}/relay/v1/status`);
  return (await res.json()) as Record<string, any>;
}

/** Resolves once `check` holds: for state outside the test's control (a lease running out, a reconnect). */
async function until<T>(check: () => Promise<T | null | undefined | false>, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every /v2 request the mock received, fetched anew. */
async function fetchRequests(): Promise<MockRequestRecord[]> {
  requests = (await (await fetch(`${api.url}/__mock/requests`)).json()) as MockRequestRecord[];
  return requests;
}

async function control(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${api.url}/__mock/${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  if (!res.ok) throw new Error(`mock control ${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

async function upsertCoupon(record: WireRecord): Promise<void> {
  const at = model.coupons.findIndex((c) => c.coupon_code === record.coupon_code);
  if (at >= 0) model.coupons[at] = record;
  else model.coupons.push(record);
  await control('POST', 'coupons', record);
}

async function removeCoupon(code: string): Promise<void> {
  model.coupons.splice(model.coupons.findIndex((c) => c.coupon_code === code), 1);
  await control('DELETE', `coupons/${encodeURIComponent(code)}`);
}

const throttled = async (): Promise<MockRequestRecord[]> => (await fetchRequests()).filter((r) => r.throttled);
const listCalls = (): MockRequestRecord[] => requests.filter((r) => r.path === LIST_PATH);
const pagesOf = (calls: MockRequestRecord[]): number[] => calls.map((r) => Number(r.query.offset ?? 1));

/** The upstream list calls split into listings: a listing starts with page 1. */
function listings(): MockRequestRecord[][] {
  const runs: MockRequestRecord[][] = [];
  for (const call of listCalls()) {
    if (Number(call.query.offset ?? 1) === 1 || runs.length === 0) runs.push([]);
    runs.at(-1)!.push(call);
  }
  return runs;
}

/**
 * Runs `change` on the mock's data while holding the relays' sync lease ('sync', see relay/upstreamSync.ts), so
 * that no listing is under way or starts meanwhile: the API does not change mid-listing in this test.
 */
async function betweenListings(change: () => Promise<void>): Promise<void> {
  const lease = await until(() => operator.acquireLease('sync', 'scale-test', 60_000), 'the sync lease to be free');
  try {
    await change();
  } finally {
    await operator.releaseLease(lease);
  }
}

/** Resolves with every relay's status once each has seen a listing confirmed after `after` (ms). */
function listedAfter(after: number, what: string): Promise<Record<string, any>[]> {
  return until(async () => {
    const all = await Promise.all(relays.map(status));
    return all.every((s) => (s.confirmedAt?.coupons ?? 0) > after) ? all : null;
  }, what);
}

/** The shop's coupons as the mock API holds them now: what every engine must end up with. */
function upstreamCodes(): string[] {
  return model.coupons.map((c) => String(c.coupon_code)).sort();
}

/** Which snapshot a list an engine showed belongs to: 1, 2, both ('mix'), or neither (no marker in it). */
function snapshotOf(list: Coupon[]): 1 | 2 | 'mix' | null {
  const seen = new Set<1 | 2>();
  const byCode = new Map(list.map((c) => [c.coupon_code, c]));
  for (const [code, s1] of [[codes.page1, codes.s1.page1], [codes.page3, codes.s1.page3]] as const) {
    const coupon = byCode.get(code);
    if (coupon) seen.add(coupon.apply_sale_price === s1 ? 1 : 2);
  }
  if (byCode.has(NEW_CODE)) seen.add(2);
  if (byCode.has(codes.gone)) seen.add(1);
  return seen.size === 2 ? 'mix' : seen.size === 1 ? [...seen][0]! : null;
}

async function engineCodes(lookup: ShopLookup): Promise<string[]> {
  const result = await next(lookup.coupons(), (r: LookupResult<Coupon[]>) => r.syncedAt !== null && !r.fetching, 20_000);
  return result.data.map((c) => c.coupon_code).sort();
}

async function startRelay(port = 0): Promise<RelayProcess> {
  const child = await startChildServer<{ port: number; instance: string }>('relayChild.ts', { ...config, port });
  return Object.assign(child, { instance: child.ready.instance });
}

/** Every engine syncs through its relay; resolves with each engine's codes. */
async function syncAll(): Promise<string[][]> {
  const reports = await Promise.all(engines.map((e) => e.lookup.sync()));
  for (const report of reports) expect(report.errors).toEqual([]);
  return Promise.all(engines.map((e) => engineCodes(e.lookup)));
}

beforeAll(async () => {
  // persistent: the "Redis restarts" step expects the shared state back, as a production Redis would keep it
  redis = await startRedisServer({ persistent: true });
  api = await startChildServer<{ port: number }>('mockChild.ts', { rateLimits: { list: 1, other: 5 } });
  operator = await createRedisStore({ redis: redis.url, shopId: SHOP, maxBackoffMs: 100 });
  const coupons = model.coupons;
  codes = {
    page1: String(coupons[PAGE1_CODE_INDEX]!.coupon_code),
    page3: String(coupons[PAGE3_CODE_INDEX]!.coupon_code),
    gone: String(coupons[GONE_INDEX]!.coupon_code),
    s1: { page1: null, page3: null },
  };
  config = {
    target: api.url, redis: redis.url, shopId: SHOP, basePath: BASE_PATH, key: 'demo-key', secret: 'demo-secret',
    leaseMs: LEASE_MS, refreshIntervalMs: REFRESH_MS,
  };
  // an operator's view of the shared state: every head the instances commit
  listener = createClient({ url: redis.url, socket: { reconnectStrategy: () => 100 } });
  listener.on('error', () => undefined); // Redis is restarted on purpose below; node-redis reconnects
  await listener.connect();
  reader = listener.duplicate();
  reader.on('error', () => undefined);
  await reader.connect();
  await listener.subscribe(`shop-lookup:${SHOP}:feed:head`, (message) => {
    const at = (JSON.parse(message) as { confirmedAt: { coupons?: number } }).confirmedAt.coupons;
    if (at !== undefined && confirmations.at(-1) !== at) confirmations.push(at);
  });
  relays = await Promise.all([startRelay(), startRelay(), startRelay()]);
}, 60_000);

afterAll(async () => {
  if (process.env.SCALE_DEBUG) {
    await fetchRequests().catch(() => undefined);
    const t0 = requests[0]?.at ?? 0;
    for (const r of requests) console.log(r.at - t0, r.method, r.path, r.query.offset ?? '', r.status, r.fault ?? '');
    for (const relay of relays) console.log(`--- relay ${relay.instance}\n${relay.output()}`);
  }
  for (const s of subscriptions) s.unsubscribe();
  listener?.destroy();
  reader?.destroy();
  await Promise.all(engines.map((e) => e.lookup.close()));
  await Promise.all(relays.map((r) => r.kill()));
  await operator?.close();
  await api?.kill();
  await redis?.stop();
});

describe('relay at scale: three instances on one Redis, twenty engines', () => {
  it('lists the API once (one call per page, no 429) and every engine converges on that snapshot', async () => {
    const [first] = await listedAfter(0, 'the first listing');
    expect(first!.store).toBe('redis');
    await fetchRequests();
    expect(pagesOf(listings()[0]!)).toEqual([1, 2, 3]);

    for (let i = 0; i < ENGINES; i++) {
      const relay = i % relays.length;
      const lookup = createShopLookup({
        baseUrl: `${relays[relay]!.url}${BASE_PATH}`,
        worker: false,
        indexedDB: new IDBFactory(),
        IDBKeyRange,
        rateLimits: false,
        refreshIntervalMs: 3_600_000,
        retry: { retries: 1, unansweredRetries: 1, baseDelayMs: 10, maxDelayMs: 50 },
        dbName: `scale-engine-${i}`,
      });
      const engine = { lookup, relay, lists: [] as Coupon[][], statuses: [] as SyncStatus[] };
      subscriptions.push(lookup.coupons().subscribe((r) => engine.lists.push(r.data)));
      subscriptions.push(lookup.status().subscribe((s) => engine.statuses.push(s)));
      engines.push(engine);
    }
    const all = await syncAll();
    for (const list of all) expect(list).toEqual(upstreamCodes());
    const sample = (await next(engines[0]!.lookup.coupons(), (r) => r.data.length > 0)).data;
    codes.s1.page1 = sample.find((c) => c.coupon_code === codes.page1)!.apply_sale_price;
    codes.s1.page3 = sample.find((c) => c.coupon_code === codes.page3)!.apply_sale_price;
    expect(await throttled()).toEqual([]);
  }, 60_000);

  it('resumes a listing from its checkpoint on another instance when the lister dies mid-listing; engines never see a mix', async () => {
    // snapshot 2, between two listings: a change on page 1 and on page 3, one coupon gone, one new (still 3 pages);
    // the next listing's page 2 waits at the mock until the test has killed whoever asked for it
    let holdId = 0;
    await betweenListings(async () => {
      const coupons = model.coupons;
      await upsertCoupon({ ...coupons[PAGE1_CODE_INDEX], apply_sale_price: 777_001, apply_sale_percent: 0 } as WireRecord);
      await upsertCoupon({ ...coupons[PAGE3_CODE_INDEX], apply_sale_price: 777_003, apply_sale_percent: 0 } as WireRecord);
      await removeCoupon(codes.gone);
      await upsertCoupon({ ...coupons[0], coupon_code: NEW_CODE, name: '새 쿠폰' } as WireRecord);
      // the next listing starts at page 1 (no checkpoint is left): its second list call is page 2
      holdId = (await control('POST', 'holds', { when: { pathPattern: `^${LIST_PATH}$`, after: 1 } })).id as number;
    });
    const held = await until(async () => (await fetchRequests()).find((r) => r.fault === 'held'), 'the page 2 request to be held');
    expect(held.query.offset).toBe('2');
    const owner = (await readLease())!.owner;
    const lister = relays.findIndex((r) => r.instance === owner);
    expect(lister).toBeGreaterThanOrEqual(0);

    // mid-listing: every engine syncs and still gets snapshot 1 whole
    const mid = await syncAll();
    for (const list of mid) expect(list).toContain(codes.gone);

    const port = relays[lister]!.port;
    await relays[lister]!.kill();
    const dead = (await readLease())!; // its last renewal: nobody may list before this runs out
    await control('DELETE', `holds/${holdId}`); // its answer goes to a dead socket

    await until(async () => {
      const live = relays.filter((_, i) => i !== lister);
      const all = await Promise.all(live.map(status));
      return all.some((s) => (s.confirmedAt?.coupons ?? 0) > held.at);
    }, 'another instance to finish the listing');
    // resumed, not restarted: page 1 was not asked again, the held page 2 was, after the dead lister's lease ran out
    await fetchRequests();
    const run = listings().find((r) => r.some((call) => call.fault === 'held'))!;
    expect(pagesOf(run)).toEqual([1, 2, 2, 3]);
    expect(run[2]!.at).toBeGreaterThanOrEqual(dead.expiresAt);

    relays[lister] = await startRelay(port); // the instance comes back (its engines point at it)
    await listedAfter(held.at, 'every relay to hold snapshot 2');
    const after = await syncAll();
    for (const list of after) expect(list).toEqual(upstreamCodes());
    for (const engine of engines) {
      for (const list of engine.lists) expect(snapshotOf(list)).not.toBe('mix');
      expect(snapshotOf(engine.lists.at(-1)!)).toBe(2);
    }
    expect(await throttled()).toEqual([]);
  }, 90_000);

  it('keeps engines answering while Redis is down, says so in the status, and recovers after Redis restarts', async () => {
    // right after a listing, so that no listing is cut by the outage
    await fetchRequests();
    const listed = await listedAfter(listCalls().at(-1)!.at, 'a listing to end');
    const before = listed[0]!;
    await redis.stop();
    const degraded = await until(async () => {
      const all = await Promise.all(relays.map(status));
      return all.every((s) => s.degraded) ? all : null;
    }, 'every relay to say it is degraded');
    for (const s of degraded) expect(s.error).toContain(redis.url);

    // the relays answer from their last snapshot and the engines from IndexedDB; nothing looks offline to them
    for (const engine of engines) {
      const welcome = await next(engine.lookup.coupon('WELCOME10'), (r) => r.data !== null);
      expect(welcome.data!.coupon_code).toBe('WELCOME10');
      expect(await engineCodes(engine.lookup)).toEqual(upstreamCodes());
      expect(engine.statuses.at(-1)).toMatchObject({ online: true, lastError: null });
    }

    await redis.start();
    const recovered = await until(async () => {
      const all = await Promise.all(relays.map(status));
      return all.every((s) => !s.degraded) ? all : null;
    }, 'every relay to reconnect');
    for (const s of recovered) expect(s).toMatchObject({ handle: before.handle, error: null });

    // the shared state came back with Redis: the next refresh lists once more and every engine gets its change
    let changedAt = 0;
    await betweenListings(async () => {
      changedAt = Date.now();
      await upsertCoupon({ ...model.coupons[1], apply_sale_price: 4_321 } as WireRecord);
    });
    await listedAfter(changedAt, 'a listing after the restart');
    const all = await syncAll();
    for (const list of all) expect(list).toEqual(upstreamCodes());
    for (const engine of engines) {
      const changed = await next(engine.lookup.coupon(String(model.coupons[1]!.coupon_code)), (r) => r.data !== null);
      expect(changed.data!.apply_sale_price).toBe(4_321);
    }
  }, 90_000);

  it('listed once per refresh over the whole run: one lister at a time, one pass per refresh, no 429', async () => {
    await fetchRequests();
    await listedAfter(listCalls().at(-1)!.at, 'the listing under way to end');
    await fetchRequests();
    const runs = listings();
    // every listing is one pass over the pages, except the one whose lister was killed, resumed at page 2
    expect(runs.map((r) => pagesOf(r).join(',')).filter((shape) => shape !== '1,2,3')).toEqual(['1,2,2,3']);
    // each pass ended in exactly one commit, and a new listing started only once the last one was due again
    // (0.9 refresh intervals after it started, by the relays' shared confirmedAt): three instances refreshing on
    // their own timers did not list three times
    expect(confirmations).toHaveLength(runs.length);
    for (let i = 1; i < confirmations.length; i++) {
      expect(confirmations[i]! - confirmations[i - 1]!).toBeGreaterThanOrEqual(REFRESH_MS * 0.9);
    }
    expect(await throttled()).toEqual([]);
  }, 30_000);
});

/** The sync lease as Redis holds it (who lists now, and until when), or null. */
async function readLease(): Promise<{ owner: string; expiresAt: number } | null> {
  const keys: string[] = [];
  for await (const batch of reader!.scanIterator({ MATCH: `shop-lookup:${SHOP}:lease:*` })) keys.push(...batch);
  const leaseKey = keys.find((k) => !k.endsWith(':fence'));
  const value = leaseKey ? await reader!.get(leaseKey) : null;
  return value ? (JSON.parse(value) as { owner: string; expiresAt: number }) : null;
}
