// The relay in production, proven with real processes (issue 10 item 7, issue 19 item 4): three relay processes
// started from the shop-lookup-relay command on one real redis-server, a round-robin balancer in front of them on
// loopback, twenty engines (worker: false, fake-indexeddb) behind it, each signed in with a till token of its own
// (static or signed), the mock API with its real rate limits (list 1/s, other 5/s) in its own process. Under
// SIGKILL of the lister mid-listing, SIGTERM of the next lister during open long-polls, and Redis restarted with and
// without its data, checked by outcomes: one listing at a time, resumed from its checkpoint, no 429, no engine
// ever showing a mix of two snapshots or an emptied list, nothing lost, every till moved and answered, no log line
// holding a secret. The interleavings are driven, not waited for: the mock holds a page request until the test has
// killed whoever asked for it, and the test changes the API's data only while it holds the sync lease itself. Every
// figure is printed at the end (and written to test-results/relay-process-faults.json) for docs/faults.md.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockData, type MockRequestRecord, type WireRecord } from '@shop-lookup/mock-server';
import { createRedisStore } from '../../relay/src/store/redis/redisStore';
import type { RelayStore } from '../../relay/src/store/relayStore';
import { signTillToken } from '../../relay/src/server/tillTokens';
import { createShopLookup, type ShopLookup } from '../src';
import type { Coupon, LookupResult, SyncStatus } from '../src/types';
import { startChildServer, type ChildServer } from '@shop-lookup/test-kit/childProcess';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { everyRelayLine, startRelayBin, type Json, type RelayBinProcess } from '@shop-lookup/test-kit/relayBin';
import { startBalancer, type Balancer } from './roundRobinBalancer';
import { next } from './utils';

const SHOP = 'scale';
const KEY = 'scale-key-3b9f1c77d2';
const SECRET = 'scale-secret-a61e04c5b8';
const TOKEN_SECRET = 'scale-till-signing-secret-0123456789abcdef';
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
/** The mock API, in its own process, steered over its /__mock/ endpoints. */
let api: ChildServer<{ port: number }>;
/** What the mock holds, kept in step here: createMockData() is what the mock starts with (same seed). */
const model = createMockData();
/** The relays' store, as an operator would open it: to hold the sync lease while the test changes the API. */
let operator: RelayStore;
let requests: MockRequestRecord[] = [];
let relays: RelayBinProcess[] = [];
let balancer: Balancer;
let env: Record<string, string>;
const engines: {
  lookup: ShopLookup;
  till: string;
  lists: Coupon[][];
  statuses: { at: number; status: SyncStatus }[];
}[] = [];
const subscriptions: { unsubscribe(): void }[] = [];
/** confirmedAt.coupons of every committed listing (= when it started), heard on the store's pub/sub channel. */
const confirmations: number[] = [];
let listener: ReturnType<typeof createClient> | undefined;
let reader: ReturnType<typeof createClient> | undefined;
let codes: { page1: string; page3: string; gone: string; s1: { page1: unknown; page3: unknown } };
/** Every till token and every upstream token of the run: no log line may hold one. */
const tokens = new Set<string>();
/** The figures of the run, printed at the end and written for docs/faults.md. */
const figures: Record<string, number | string> = {};
/** When Redis was restarted without its data: listings from then on start a new history. */
let wipedAt = Infinity;

const live = (): RelayBinProcess[] => relays.filter((r) => r.alive());

async function getJson(url: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Json };
}

/** A relay's status route, as an operator on its machine reads it (loopback: no OPS_TOKEN needed). */
async function status(relay: RelayBinProcess): Promise<Json> {
  return (await getJson(`${relay.url}${BASE_PATH}/relay/v1/status`)).body;
}

/** Resolves once `check` holds: for state outside the test's control (a lease running out, a reconnect). */
async function until<T>(check: () => Promise<T | null | undefined | false>, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // every 100 ms: one status request a relay, well under a client's 20 a second (this test process is one client
    // to each relay; polling faster drained its bucket and an operator's status answer became a 429)
    await new Promise((resolve) => setTimeout(resolve, 100));
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
  model.coupons.splice(
    model.coupons.findIndex((c) => c.coupon_code === code),
    1,
  );
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
 * Runs `change` on the mock's data while holding the relays' sync lease ('sync', see relay/upstream/upstreamSync.ts),
 * so that no listing is under way or starts meanwhile: the API does not change mid-listing in this test.
 */
async function betweenListings(change: () => Promise<void>): Promise<void> {
  const lease = await until(() => operator.acquireLease('sync', 'scale-test', 60_000), 'the sync lease to be free');
  try {
    await change();
  } finally {
    await operator.releaseLease(lease);
  }
}

/** Resolves with every live relay's status once each has seen a listing confirmed after `after` (ms). */
function listedAfter(after: number, what: string): Promise<Json[]> {
  return until(async () => {
    const all = await Promise.all(live().map(status));
    return all.every((s) => (s.confirmedAt?.coupons ?? 0) > after) ? all : null;
  }, what);
}

/** Resolves once every live relay's /readyz answers `ready` (true: 200, false: 503), with their answers. */
function readiness(ready: boolean, what: string): Promise<Json[]> {
  return until(async () => {
    const all = await Promise.all(live().map((r) => getJson(`${r.url}/readyz`)));
    return all.every((a) => (a.status === 200) === ready) ? all.map((a) => a.body) : null;
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
  for (const [code, s1] of [
    [codes.page1, codes.s1.page1],
    [codes.page3, codes.s1.page3],
  ] as const) {
    const coupon = byCode.get(code);
    if (coupon) seen.add(coupon.apply_sale_price === s1 ? 1 : 2);
  }
  if (byCode.has(NEW_CODE)) seen.add(2);
  if (byCode.has(codes.gone)) seen.add(1);
  return seen.size === 2 ? 'mix' : seen.size === 1 ? [...seen][0]! : null;
}

async function engineCodes(lookup: ShopLookup): Promise<string[]> {
  const result = await next(
    lookup.coupons(),
    (r: LookupResult<Coupon[]>) => r.syncedAt !== null && !r.fetching,
    20_000,
  );
  return result.data.map((c) => c.coupon_code).sort();
}

/** Records an engine lost (upstream has them, the engine does not) or shows that upstream no longer has. */
function recordsOff(codesShown: string[]): number {
  const upstream = new Set(upstreamCodes());
  const shown = new Set(codesShown);
  return [...upstream].filter((c) => !shown.has(c)).length + [...shown].filter((c) => !upstream.has(c)).length;
}

function startRelay(port = 0): Promise<RelayBinProcess> {
  return startRelayBin({ ...env, PORT: String(port) });
}

/** Every engine syncs through the balancer; resolves with each engine's codes. */
async function syncAll(): Promise<string[][]> {
  const reports = await Promise.all(engines.map((e) => e.lookup.sync()));
  for (const report of reports) expect(report.errors).toEqual([]);
  return Promise.all(engines.map((e) => engineCodes(e.lookup)));
}

/** The sync lease as Redis holds it (who lists now, and until when), or null. */
async function readLease(): Promise<{ owner: string; expiresAt: number } | null> {
  const keys: string[] = [];
  for await (const batch of reader!.scanIterator({ MATCH: `shop-lookup:{${SHOP}}:lease:*` })) keys.push(...batch);
  const leaseKey = keys.find((k) => !k.endsWith(':fence'));
  const value = leaseKey ? await reader!.get(leaseKey) : null;
  return value ? (JSON.parse(value) as { owner: string; expiresAt: number }) : null;
}

/** The upstream token the relays share now (kept for the log check). */
async function noteUpstreamToken(): Promise<void> {
  const token = await reader!.get(`shop-lookup:{${SHOP}}:token`).catch(() => null);
  if (token) tokens.add(token);
}

/** Long-polls parked on the live relays. */
async function parked(): Promise<number> {
  return (await Promise.all(live().map(status))).reduce((sum, s) => sum + (s.waiting as number), 0);
}

beforeAll(async () => {
  // persistent: the "Redis restarts" step expects the shared state back, as a production Redis would keep it
  redis = await startRedisServer({ persistent: true });
  api = await startChildServer<{ port: number }>('mockChild.ts', {
    key: KEY,
    secret: SECRET,
    rateLimits: { list: 1, other: 5 },
  });
  operator = await createRedisStore({ redis: redis.url, shopId: SHOP, maxBackoffMs: 100 });
  const coupons = model.coupons;
  codes = {
    page1: String(coupons[PAGE1_CODE_INDEX]!.coupon_code),
    page3: String(coupons[PAGE3_CODE_INDEX]!.coupon_code),
    gone: String(coupons[GONE_INDEX]!.coupon_code),
    s1: { page1: null, page3: null },
  };
  // half the tills sign in with a line of the token file, the other half with a signed token
  const dir = mkdtempSync(join(tmpdir(), 'shop-lookup-scale-'));
  const tokensFile = join(dir, 'tills.txt');
  const tillTokens = Array.from({ length: ENGINES }, (_, i) =>
    i % 2 === 0
      ? `static-${i}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`
      : signTillToken({ secret: TOKEN_SECRET, shop: SHOP, till: `till-${i}`, expiresAt: Date.now() + 3_600_000 }),
  );
  for (const t of tillTokens) tokens.add(t);
  writeFileSync(tokensFile, tillTokens.map((t, i) => (i % 2 === 0 ? `till-${i} ${t}` : '')).join('\n'));
  env = {
    SHOP_API_KEY: KEY,
    SHOP_API_SECRET: SECRET,
    SHOP_API_TARGET: api.url,
    REDIS_URL: redis.url,
    SHOP_ID: SHOP,
    BASE_PATH,
    LEASE_MS: String(LEASE_MS),
    REFRESH_INTERVAL_MS: String(REFRESH_MS),
    TILL_TOKENS_FILE: tokensFile,
    TILL_TOKEN_SECRET: TOKEN_SECRET,
    TRUST_PROXY_HOPS: '1',
  };
  // an operator's view of the shared state: every head the instances commit
  listener = createClient({ url: redis.url, socket: { reconnectStrategy: () => 100 } });
  listener.on('error', () => undefined); // Redis is restarted on purpose below; node-redis reconnects
  await listener.connect();
  reader = listener.duplicate();
  reader.on('error', () => undefined);
  await reader.connect();
  await listener.subscribe(`shop-lookup:{${SHOP}}:feed:head`, (message) => {
    const at = (JSON.parse(message) as { confirmedAt: { coupons?: number } }).confirmedAt.coupons;
    if (at !== undefined && confirmations.at(-1) !== at) confirmations.push(at);
  });
  relays = await Promise.all([startRelay(), startRelay(), startRelay()]);
  balancer = await startBalancer(relays.map((r) => r.url));

  for (let i = 0; i < ENGINES; i++) {
    const till = `till-${i}`;
    const token = tillTokens[i]!;
    const lookup = createShopLookup({
      baseUrl: `${balancer.url}${BASE_PATH}`,
      worker: false,
      indexedDB: new IDBFactory(),
      IDBKeyRange,
      rateLimits: false,
      refreshIntervalMs: 3_600_000,
      retry: { retries: 1, unansweredRetries: 1, baseDelayMs: 10, maxDelayMs: 50 },
      dbName: `scale-engine-${i}`,
      // the till's token on every request; x-test-till lets the balancer's log name the till
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${token}`);
        headers.set('x-test-till', till);
        return fetch(input, { ...init, headers });
      },
    });
    const engine = { lookup, till, lists: [] as Coupon[][], statuses: [] as { at: number; status: SyncStatus }[] };
    subscriptions.push(lookup.coupons().subscribe((r) => engine.lists.push(r.data)));
    subscriptions.push(lookup.status().subscribe((s) => engine.statuses.push({ at: Date.now(), status: s })));
    engines.push(engine);
  }
}, 60_000);

afterAll(async () => {
  if (process.env.SCALE_DEBUG) {
    await fetchRequests().catch(() => undefined);
    const t0 = requests[0]?.at ?? 0;
    for (const r of requests) console.log(r.at - t0, r.method, r.path, r.query.offset ?? '', r.status, r.fault ?? '');
    for (const relay of relays) console.log(`--- relay ${relay.instance}\n${relay.output()}`);
    for (const engine of engines) {
      const offline = engine.statuses.filter((s) => !s.status.online || s.status.lastError);
      if (offline.length === 0) continue;
      console.log(
        `--- ${engine.till} offline/errors at`,
        offline.map((s) => [s.at - t0, s.status.online, s.status.lastError?.code]),
      );
      for (const r of balancer.log.filter(
        (r) => r.till === engine.till && (r.errors.length > 0 || (r.status ?? 0) >= 500 || r.status === null),
      )) {
        console.log(
          '   ',
          r.url.slice(0, 70),
          r.at - t0,
          r.doneAt === null ? null : r.doneAt - t0,
          r.status,
          r.errors.join(' '),
        );
      }
    }
  }
  for (const s of subscriptions) s.unsubscribe();
  await Promise.all(engines.map((e) => e.lookup.close()));
  await balancer?.close();
  await Promise.all(relays.map((r) => r.kill()));
  listener?.destroy();
  reader?.destroy();
  await operator?.close();
  await api?.kill();
  await redis?.stop();
  const lines = Object.entries(figures).map(([name, value]) => `  ${name}: ${value}`);
  console.log(`relay processes under faults (3 instances, 1 Redis, ${ENGINES} tills):\n${lines.join('\n')}`);
  mkdirSync('test-results', { recursive: true });
  writeFileSync('test-results/relay-process-faults.json', `${JSON.stringify(figures, null, 2)}\n`);
});

describe('relay processes: three instances from the command on one Redis, a balancer, twenty tills', () => {
  it('lists the API once (one call per page, no 429) and every till converges on that snapshot', async () => {
    const [first] = await listedAfter(0, 'the first listing');
    expect(first!.store).toBe('redis');
    await fetchRequests();
    expect(pagesOf(listings()[0]!)).toEqual([1, 2, 3]);
    await noteUpstreamToken();

    const all = await syncAll();
    for (const list of all) expect(list).toEqual(upstreamCodes());
    const sample = (await next(engines[0]!.lookup.coupons(), (r) => r.data.length > 0)).data;
    codes.s1.page1 = sample.find((c) => c.coupon_code === codes.page1)!.apply_sale_price;
    codes.s1.page3 = sample.find((c) => c.coupon_code === codes.page3)!.apply_sale_price;
    // every till's requests were answered by all three instances, each with its own name (per-till bounds)
    const backends = new Set(balancer.log.map((r) => r.backend));
    expect(backends.size).toBe(3);
    expect(await throttled()).toEqual([]);
  }, 60_000);

  it('SIGKILL of the lister mid-listing: another resumes it after the lease; SIGTERM of that one during long-polls: its tills move at once, the lease is released, a third finishes the listing', async () => {
    // snapshot 2, between two listings: a change on page 1 and on page 3, one coupon gone, one new (still 3 pages);
    // the next listing's page 2 waits at the mock (hold 1) until its lister is killed, and the page 2 asked again
    // by whoever resumes the listing waits too (hold 2), until that one is stopped with SIGTERM
    let hold1 = 0;
    let hold2 = 0;
    await betweenListings(async () => {
      const coupons = model.coupons;
      await upsertCoupon({
        ...coupons[PAGE1_CODE_INDEX],
        apply_sale_price: 777_001,
        apply_sale_percent: 0,
      } as WireRecord);
      await upsertCoupon({
        ...coupons[PAGE3_CODE_INDEX],
        apply_sale_price: 777_003,
        apply_sale_percent: 0,
      } as WireRecord);
      await removeCoupon(codes.gone);
      await upsertCoupon({ ...coupons[0], coupon_code: NEW_CODE, name: '새 쿠폰' } as WireRecord);
      // the next listing starts at page 1 (no checkpoint is left): its second list call is page 2, its third the
      // resumed page 2
      // (answered: each is answered, and counted by the API's rate limit, when it arrives; only the answer waits)
      hold1 = (await control('POST', 'holds', { when: { pathPattern: `^${LIST_PATH}$`, after: 1 }, answered: true }))
        .id as number;
      hold2 = (await control('POST', 'holds', { when: { pathPattern: `^${LIST_PATH}$`, after: 2 }, answered: true }))
        .id as number;
    });
    const held = await until(
      async () => (await fetchRequests()).find((r) => r.fault === 'held'),
      'the page 2 request to be held',
    );
    expect(held.query.offset).toBe('2');
    const lister = (await until(readLease, 'a lease holder')).owner;
    const killed = relays.findIndex((r) => r.instance === lister);
    expect(killed).toBeGreaterThanOrEqual(0);

    // mid-listing: every till syncs and still gets snapshot 1 whole
    const mid = await syncAll();
    for (const list of mid) expect(list).toContain(codes.gone);

    const killedPort = relays[killed]!.port;
    const dead = (await readLease())!; // its last renewal: nobody may list before this runs out
    const killedAt = Date.now();
    await relays[killed]!.kill();
    await control('DELETE', `holds/${hold1}`); // its answer goes to a dead socket

    // resumed, not restarted: page 2 asked again (and held), after the dead lister's lease ran out
    const resumed = await until(
      async () => (await fetchRequests()).filter((r) => r.fault === 'held')[1],
      'the resumed page 2 request',
    );
    expect(resumed.query.offset).toBe('2');
    expect(resumed.at).toBeGreaterThanOrEqual(dead.expiresAt);
    figures['SIGKILL of the lister mid-listing: take-over (kill → resumed page request), ms'] = resumed.at - killedAt;
    figures['  (lease time, ms)'] = LEASE_MS;

    // the resumer lists (its page 2 is held): every till has a long-poll open on one of the two live instances
    const resumer = (await until(readLease, 'the resumer to hold the lease')).owner;
    const stopped = relays.findIndex((r) => r.instance === resumer);
    expect(stopped).toBeGreaterThanOrEqual(0);
    expect(stopped).not.toBe(killed);
    await until(
      async () => (await parked()) === ENGINES && relays[stopped]!.alive(),
      'every till to have a long-poll open',
    );
    const before = (await readLease())!;
    expect(before.owner).toBe(relays[stopped]!.instance);
    const survivor = relays.find((_r, i) => i !== stopped && i !== killed)!;

    const termAt = Date.now();
    relays[stopped]!.signal('SIGTERM');
    const exit = await relays[stopped]!.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    figures['SIGTERM of the lister during long-polls: shutdown (signal → exit 0), ms'] = Date.now() - termAt;
    // it gave up the lease on its way out: nobody holds it, or the survivor took it already
    const after = await readLease();
    expect(after === null || after.owner === survivor.instance).toBe(true);
    await control('DELETE', `holds/${hold2}`);

    // its tills: their long-polls were answered at once, and each polled again on the survivor
    const stoppedUrl = relays[stopped]!.url;
    const cut = balancer.log.filter(
      (r) => r.backend === stoppedUrl && r.url.includes('wait=') && (r.doneAt ?? 0) >= termAt,
    );
    expect(cut.length).toBeGreaterThan(0);
    const moved = await until(
      async () => {
        const times = cut.map((c) =>
          balancer.log.find(
            (r) =>
              r.till === c.till &&
              r.at >= c.doneAt! &&
              r.url.includes('wait=') &&
              r.backend !== stoppedUrl &&
              r.sentAt > 0,
          ),
        );
        return times.every(Boolean) ? times.map((r) => r!.sentAt - termAt) : null;
      },
      'the tills of the stopped instance to poll another',
      10_000,
    ).catch((error: unknown) => {
      for (const c of cut) {
        console.log('cut', c.till, c.at - termAt, c.doneAt! - termAt, c.status);
        for (const r of balancer.log.filter((r) => r.till === c.till && r.at >= termAt - 100))
          console.log(
            '   ',
            r.url.slice(0, 60),
            r.backend?.slice(-5),
            r.at - termAt,
            r.sentAt - termAt,
            r.doneAt === null ? null : r.doneAt - termAt,
            r.status,
          );
      }
      throw error;
    });
    expect(Math.max(...moved)).toBeLessThan(2_000);
    figures['  tills whose long-poll was on it'] = cut.length;
    figures['  tills moved to the survivor within, ms'] = Math.max(...moved);

    // the survivor resumes the listing without waiting for the lease to run out, and commits snapshot 2
    const third = await until(
      async () =>
        (await fetchRequests()).filter((r) => r.path === LIST_PATH && r.at > termAt && r.query.offset === '2')[0],
      'the listing to be resumed again',
    );
    expect(third.at).toBeLessThan(before.expiresAt + LEASE_MS); // not a fresh listing after a lapse: see the shapes below
    figures['  take-over (signal → resumed page request), ms'] = third.at - termAt;
    await until(
      async () => ((await status(survivor)).confirmedAt?.coupons ?? 0) > held.at,
      'the survivor to commit the listing',
    );
    relays[killed] = await startRelay(killedPort); // the killed instance comes back on its port
    await listedAfter(held.at, 'every live relay to hold snapshot 2');
    await fetchRequests();
    const run = listings().find((r) => r.some((call) => call.fault === 'held'))!;
    expect(pagesOf(run)).toEqual([1, 2, 2, 2, 3]);

    // no till saw an error, and each got snapshot 2 by its long-poll, never a mix, nothing lost
    let off = 0;
    for (const engine of engines) {
      const latest = await next(engine.lookup.coupons(), (r) => snapshotOf(r.data) === 2, 10_000);
      off += recordsOff(latest.data.map((c) => c.coupon_code));
      const mixed = engine.lists.findIndex((list) => snapshotOf(list) === 'mix');
      if (mixed >= 0) {
        const list = engine.lists[mixed]!;
        const by = new Map(list.map((c) => [c.coupon_code, c]));
        console.log(
          'MIX',
          engine.till,
          mixed,
          engine.lists.length,
          list.length,
          by.get(codes.page1)?.apply_sale_price,
          by.get(codes.page3)?.apply_sale_price,
          by.has(NEW_CODE),
          by.has(codes.gone),
        );
        for (const r of balancer.log.filter((r) => r.till === engine.till))
          console.log('   ', r.url.slice(0, 90), r.backend?.slice(-5), r.at, r.status);
      }
      for (const list of engine.lists) expect(snapshotOf(list)).not.toBe('mix');
      for (const { status: s } of engine.statuses.filter((s) => s.at >= killedAt)) expect(s.lastError).toBeNull();
    }
    expect(off).toBe(0);
    figures['records lost or extra, over every till'] = off;
    expect(await throttled()).toEqual([]);
    await noteUpstreamToken();
  }, 90_000);

  it('Redis restarted with its data: not ready while it is gone, tills keep answering, everything back by itself', async () => {
    // right after a listing, so that no listing is cut by the outage
    await fetchRequests();
    const listed = await listedAfter(listCalls().at(-1)!.at, 'a listing to end');
    const before = listed[0]!;
    await redis.stop();
    const gone = await readiness(false, 'every relay to report not ready');
    // the reason names no Redis host or port: that is for the log
    for (const answer of gone) expect(answer.reason).toBe('the store is unreachable (its error is in the log)');
    const degraded = await Promise.all(live().map(status));
    for (const s of degraded) expect(s).toMatchObject({ degraded: true });

    // the relays answer from their last snapshot and the tills from IndexedDB; nothing looks offline to them
    for (const engine of engines) {
      const welcome = await next(engine.lookup.coupon('WELCOME10'), (r) => r.data !== null);
      expect(welcome.data!.coupon_code).toBe('WELCOME10');
      expect(await engineCodes(engine.lookup)).toEqual(upstreamCodes());
      expect(engine.statuses.at(-1)!.status).toMatchObject({ online: true, lastError: null });
    }

    const startedAt = Date.now();
    await redis.start();
    await readiness(true, 'every relay to be ready again');
    figures['Redis restarted with its data: recovery (start → every relay ready), ms'] = Date.now() - startedAt;
    for (const s of await Promise.all(live().map(status)))
      expect(s).toMatchObject({ handle: before.handle, degraded: false, error: null });
    expect(await syncAll()).toEqual(engines.map(() => upstreamCodes()));
  }, 60_000);

  it('Redis restarted without its data: tills start again from a snapshot (409), never emptied nor mixed', async () => {
    await fetchRequests();
    await listedAfter(listCalls().at(-1)!.at, 'a listing to end');
    const handle = (await status(live()[0]!)).handle as string;
    const seen = engines.map((e) => e.lists.length);
    await redis.stop();
    await readiness(false, 'every relay to report not ready');
    wipedAt = Date.now();
    await redis.start({ empty: true });
    // each relay finds a new history in Redis (its own copy is no longer the shop's feed), lists, and is ready again
    await until(
      async () => (await Promise.all(live().map(status))).every((s) => s.handle !== handle),
      'every relay to see the new history',
    );
    await readiness(true, 'every relay to list the shop again and be ready');
    figures['Redis restarted without its data: recovery (start → every relay listed again and ready), ms'] =
      Date.now() - wipedAt;
    // every till was told its history is gone (409) and started again; it ends on the new snapshot
    const codesNow = await syncAll();
    for (const list of codesNow) expect(list).toEqual(upstreamCodes());
    const restarted = new Set(balancer.log.filter((r) => r.status === 409 && r.at >= wipedAt).map((r) => r.till));
    expect(restarted.size).toBe(ENGINES);
    figures['  tills told to start again (409)'] = restarted.size;
    engines.forEach((engine, i) => {
      for (const list of engine.lists.slice(seen[i])) {
        expect(list.length).toBeGreaterThan(0);
        expect(snapshotOf(list)).not.toBe('mix');
      }
    });
    expect(await throttled()).toEqual([]);
    await noteUpstreamToken();
  }, 60_000);

  it('listed once per refresh over the whole run: one lister at a time, one pass per refresh, no 429, no secret in any log', async () => {
    await fetchRequests();
    await listedAfter(listCalls().at(-1)!.at, 'the listing under way to end');
    await fetchRequests();
    const runs = listings();
    // every listing is one pass over the pages, except the one resumed twice at page 2 (SIGKILL, then SIGTERM)
    expect(runs.map((r) => pagesOf(r).join(',')).filter((shape) => shape !== '1,2,3')).toEqual(['1,2,2,2,3']);
    // each pass before the wipe ended in exactly one commit, and a new listing started only once the last one was
    // due again (0.9 refresh intervals after it started, by the relays' shared confirmedAt)
    const early = confirmations.filter((at) => at < wipedAt);
    expect(early).toHaveLength(runs.filter((r) => r[0]!.at < wipedAt).length);
    for (let i = 1; i < early.length; i++) expect(early[i]! - early[i - 1]!).toBeGreaterThanOrEqual(REFRESH_MS * 0.9);
    const upstream429 = (await throttled()).length;
    expect(upstream429).toBe(0);
    figures['upstream 429s'] = upstream429;
    figures.listings = runs.length;

    const secrets = [KEY, SECRET, TOKEN_SECRET, ...tokens];
    expect(tokens.size).toBeGreaterThan(ENGINES);
    const lines = everyRelayLine.filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThan(100);
    expect(lines.filter((line) => secrets.some((s) => line.includes(s)))).toEqual([]);
    figures['relay log lines checked for secrets'] = lines.length;
  }, 30_000);
});
