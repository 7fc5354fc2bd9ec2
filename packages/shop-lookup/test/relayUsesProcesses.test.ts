// Issued-coupon uses through relay processes (issue 35): two instances of the shop-lookup-relay command on one
// persistent redis-server, ten tills as plain HTTP clients, each sending its uses until every one is acknowledged
// (a failed or unanswered POST is sent again, to whichever instance answers). One instance is SIGKILLed with a POST
// half sent to it, and Redis is restarted with its data while the tills keep sending: no use is lost, none is kept
// twice. And a relay on its memory store killed and started again empty: the till that sold a voucher (an engine)
// sends its use again, and another till's claim of it is refused (issue 38).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { createShopLookup } from '../src';
import { startRelayBin, type RelayBinProcess } from '@shop-lookup/test-kit/relayBin';

const SHOP = 'uses-faults';
const KEY = 'uses-faults-key-7c1d';
const SECRET = 'uses-faults-secret-2b9e';
const BASE = '/shop-api';
const TILLS = 10;
const USES_PER_TILL = 30;
const PER_POST = 5;

let redis: RedisServer;
let api: MockShopApi;
let relays: RelayBinProcess[] = [];
let tokensFile: string;
const tokenOf = (till: number) => `uses-till-token-${till}-5f0c9a3e`;

beforeAll(async () => {
  redis = await startRedisServer({ persistent: true });
  api = await startMockShopApi({ rateLimits: false, key: KEY, secret: SECRET, data: { coupons: 10 } });
  const dir = mkdtempSync(join(tmpdir(), 'shop-lookup-uses-'));
  tokensFile = join(dir, 'tills.txt');
  writeFileSync(tokensFile, Array.from({ length: TILLS }, (_, t) => `till-${t} ${tokenOf(t)}`).join('\n'));
  const env = {
    SHOP_API_KEY: KEY,
    SHOP_API_SECRET: SECRET,
    SHOP_API_TARGET: api.url,
    REDIS_URL: redis.url,
    SHOP_ID: SHOP,
    BASE_PATH: BASE,
    TILL_TOKENS_FILE: tokensFile,
    SHOP_API_RATE_LIMITS: 'off',
  };
  relays = await Promise.all([startRelayBin(env), startRelayBin(env)]);
}, 30_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.kill()));
  await api?.close();
  await redis?.stop();
});

/** One till: its uses, the ones acknowledged, and how many of its POSTs failed. */
function tillOf(t: number) {
  const uses = Array.from({ length: USES_PER_TILL }, (_, i) => ({
    entry: `t${t}-e${i}`,
    code: `IC-${(t * 7 + i) % 40}`,
    couponCode: null,
    orderId: `o-${t}-${i}`,
    at: 1_000 + t * 100 + i,
    override: false,
  }));
  return { t, uses, acked: new Set<string>(), failed: 0, sent: 0 };
}
type Till = ReturnType<typeof tillOf>;

/** Sends the till's unacknowledged uses, a few at a time, until every one is acknowledged. */
async function run(till: Till, answered: { count: number }): Promise<void> {
  for (let turn = 0; till.acked.size < till.uses.length; turn++) {
    const alive = relays.filter((r) => r.alive());
    const relay = alive[turn % alive.length]!;
    const batch = till.uses.filter((u) => !till.acked.has(u.entry)).slice(0, PER_POST);
    till.sent++;
    try {
      const res = await fetch(`${relay.url}${BASE}/relay/v1/uses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenOf(till.t)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ device: `dev-${till.t}`, uses: batch }),
        signal: AbortSignal.timeout(5_000),
      });
      const body = (await res.json()) as { uses?: { entry: string }[] };
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      for (const u of body.uses!) till.acked.add(u.entry);
      answered.count++;
    } catch {
      till.failed++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** A POST to `relay` whose headers and first half of the body are written, the rest never: a send cut by a crash. */
function halfSent(relay: RelayBinProcess, body: string): Promise<string> {
  return new Promise((resolve) => {
    const req = request(`${relay.url}${BASE}/relay/v1/uses`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokenOf(0)}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      },
    });
    req.on('error', (error) => resolve(error.message));
    req.on('response', (res) => resolve(`answered ${res.statusCode}`));
    req.write(body.slice(0, body.length >> 1));
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('relay processes: issued-coupon uses under faults', () => {
  it('a relay instance killed mid-send and Redis restarted with its data: no use lost, none kept twice', async () => {
    const tills = Array.from({ length: TILLS }, (_, t) => tillOf(t));
    const answered = { count: 0 };
    const running = tills.map((till) => run(till, answered));

    // instance 0 dies with a POST half sent to it (and whatever the tills had in flight there)
    await until(() => answered.count >= 10, 'the first answers');
    const cut = halfSent(relays[0]!, JSON.stringify({ device: 'dev-0', uses: tills[0]!.uses.slice(-PER_POST) }));
    await new Promise((resolve) => setTimeout(resolve, 20)); // (the half body on its way)
    await relays[0]!.kill();
    expect(await cut).not.toMatch(/^answered/);

    // Redis goes away and comes back with its data while the tills keep sending to the one left
    const beforeRestart = answered.count;
    await until(() => answered.count >= beforeRestart + 10, 'answers from the instance left');
    await redis.stop();
    await new Promise((resolve) => setTimeout(resolve, 300)); // (tills meet the outage: 503s)
    await redis.start();
    await Promise.all(running);

    const failed = tills.reduce((n, t) => n + t.failed, 0);
    expect(failed).toBeGreaterThan(0); // the faults were met
    const reader = createClient({ url: redis.url });
    await reader.connect();
    try {
      const stored = Object.values(await reader.hGetAll(`shop-lookup:{${SHOP}}:snapshot:uses:records`)).map(
        (json) => JSON.parse(json) as { uses: { device: string; entry: string; till: string }[] },
      );
      const kept = stored.flatMap((r) => r.uses.map((u) => `${u.device}/${u.entry}`));
      const expected = tills.flatMap((t) => t.uses.map((u) => `dev-${t.t}/${u.entry}`));
      expect(kept.length).toBe(expected.length); // none twice
      expect(new Set(kept)).toEqual(new Set(expected)); // none lost
      expect(Number(await reader.get(`shop-lookup:{${SHOP}}:uses:count`))).toBe(expected.length);
      // named by their tokens
      expect(new Set(stored.flatMap((r) => r.uses.map((u) => u.till)))).toEqual(
        new Set(tills.map((t) => `till-${t.t}`)),
      );
    } finally {
      await reader.close();
    }
  }, 30_000);
});

describe('relay processes: a relay restarted empty', () => {
  it('relay restarted empty, a till refills it: the till that sold the voucher sends its use again, another till is refused', async () => {
    const env = {
      SHOP_API_KEY: KEY,
      SHOP_API_SECRET: SECRET,
      SHOP_API_TARGET: api.url,
      SHOP_ID: `${SHOP}-memory`,
      BASE_PATH: BASE,
      TILL_TOKENS_FILE: tokensFile,
      SHOP_API_RATE_LIMITS: 'off',
    };
    let relay = await startRelayBin(env);
    const code = 'IC-0000-OPEN';
    const till = createShopLookup({
      baseUrl: `${relay.url}${BASE}`,
      token: tokenOf(0),
      worker: false,
      indexedDB: new IDBFactory(),
      IDBKeyRange,
      rateLimits: false,
      retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
      dbName: 'refill-till',
    });
    try {
      expect((await till.sync()).ok).toBe(true);
      expect(await till.validateCoupon(code, { amount: 32000, orderId: 'A-1' })).toMatchObject({
        ok: true,
        claim: 'granted',
      });
      const held = async (r: RelayBinProcess) =>
        ((await (await fetch(`${r.url}/ops/uses`)).json()) as { uses: { code: string; uses: { till: string }[] }[] })
          .uses;
      expect(await held(relay)).toMatchObject([{ code, uses: [{ till: 'till-0' }] }]);
      // the relay dies and comes back on the same address, its memory store empty: a new feed
      await relay.kill();
      relay = await startRelayBin({ ...env, PORT: String(relay.port) });
      expect(await held(relay)).toEqual([]);
      // (the new relay answers 503 relay_not_ready until its first listing is in: the till's sync would say so)
      await expect.poll(async () => (await fetch(`${relay.url}/readyz`)).status, { timeout: 20_000 }).toBe(200);
      // the till finds the new feed and sends what it holds again
      expect(await till.sync()).toMatchObject({ ok: true });
      const deadline = Date.now() + 20_000;
      while ((await held(relay)).length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await held(relay)).toMatchObject([{ code, uses: [{ till: 'till-0' }] }]);
      // another till claims the voucher: refused, naming the sale
      const claim = await fetch(`${relay.url}${BASE}/relay/v1/uses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenOf(1)}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          device: 'dev-other',
          claim: true,
          uses: [{ entry: 'x1', code, couponCode: null, orderId: 'B-1', at: Date.now(), override: false }],
        }),
      });
      expect(await claim.json()).toMatchObject({
        uses: [{ entry: 'x1', recorded: false, claimed: false, first: { till: 'till-0', orderId: 'A-1' } }],
      });
    } finally {
      await till.close();
      await relay.kill();
    }
  }, 60_000);
});
