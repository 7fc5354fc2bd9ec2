// The shop-lookup-relay command in hub mode (SHOPS_FILE), as a real process from the bin in front of a multi-shop
// mock on real Redis: each shop's till is served only its own records, a till token of one shop (signed or static)
// is refused on another, shops are added and removed by editing the file (SIGHUP, or the file changing), the
// operators' routes answer, a wrong configuration is one line naming the variable, and no secret is ever logged.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTillToken } from '../src/server/tillTokens';
import { startChildServer, type ChildServer } from '@shop-lookup/test-kit/childProcess';
import {
  everyRelayLine,
  runRelayBin,
  startRelayBin,
  type Json,
  type RelayBinProcess,
} from '@shop-lookup/test-kit/relayBin';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';

const TOKEN_SECRET = 'hub-signing-secret-7c2e9a4b1d0f3e5a7b9c';
const STATIC_A = 'static-till-of-shop-000-5e1a9c';
const dir = mkdtempSync(join(tmpdir(), 'shop-lookup-hub-bin-'));
const shopsFile = join(dir, 'shops.json');

let mock: ChildServer<{ port: number }>;
let redis: RedisServer;
let relay: RelayBinProcess;

const entry = (shop: string, tills?: Record<string, string>): Json => ({
  key: `key-${shop}`,
  secret: `secret-${shop}`,
  target: `${mock.url}/shops/${shop}`,
  ...(tills ? { tills } : {}),
});
const signed = (shop: string, till: string): string =>
  signTillToken({ secret: TOKEN_SECRET, shop, till, expiresAt: Date.now() + 86_400_000 });

/** A GET, with the till's token; `from`: the address the balancer in front would append (TRUST_PROXY_HOPS=1). */
async function get(path: string, token?: string, from?: string): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = {
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(from ? { 'x-forwarded-for': from } : {}),
  };
  const res = await fetch(`${relay.url}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as Json };
}

/** A shop's whole snapshot as its till reads it (null while the shop's first listing is not committed). */
async function recordsOf(
  shop: string,
  token: string,
): Promise<{ codes: string[]; names: string[]; shops: Set<string> } | null> {
  const codes: string[] = [];
  const names: string[] = [];
  const shops = new Set<string>();
  let answer = await get(`/shops/${shop}/relay/v1/feed?limit=9`, token);
  if (answer.status !== 200) return null;
  const { handle } = answer.body;
  for (;;) {
    shops.add(answer.body.shop);
    for (const u of answer.body.upserts) {
      codes.push(String(u.record.coupon_code));
      names.push(String(u.record.name));
    }
    if (answer.body.cursor === null) break;
    answer = await get(`/shops/${shop}/relay/v1/feed?cursor=${answer.body.cursor}&handle=${handle}&limit=9`, token);
    expect(answer.status).toBe(200);
  }
  return { codes, names, shops };
}

/** Resolves once the relay logged that it read SHOPS_FILE again `count` times. */
async function reloaded(count: number): Promise<Json> {
  await expect
    .poll(() => relay.logs().filter((l) => l.msg === 'shops reloaded').length, { timeout: 10_000 })
    .toBe(count);
  return relay
    .logs()
    .filter((l) => l.msg === 'shops reloaded')
    .at(-1)!;
}

beforeAll(async () => {
  [mock, redis] = await Promise.all([
    startChildServer<{ port: number }>('multiShopMockChild.ts', { shops: 3, coupons: 25 }),
    startRedisServer(),
  ]);
  writeFileSync(
    shopsFile,
    JSON.stringify({ 'shop-000': entry('shop-000', { 'front-a': STATIC_A }), 'shop-001': entry('shop-001') }),
  );
  relay = await startRelayBin({
    SHOPS_FILE: shopsFile,
    REDIS_URL: redis.url,
    TILL_TOKEN_SECRET: TOKEN_SECRET,
    SHOP_API_RATE_LIMITS: 'off',
    SHOP_API_TARGET: 'http://127.0.0.1:9',
    // (a till's requests from another network than the tests' refused ones: refusals count per network)
    TRUST_PROXY_HOPS: '1',
  });
}, 60_000);

afterAll(async () => {
  await relay?.kill();
  await Promise.all([mock?.stop(), redis?.stop()]);
});

describe('the relay command in hub mode', () => {
  it("serves each shop's till only its own records, and refuses a till token on another shop", async () => {
    const a = signed('shop-000', 'till-a');
    const b = signed('shop-001', 'till-b');
    await expect.poll(() => recordsOf('shop-000', a), { timeout: 20_000 }).not.toBeNull();
    await expect.poll(() => recordsOf('shop-001', b), { timeout: 20_000 }).not.toBeNull();
    for (const [shop, token, other] of [
      ['shop-000', a, 'shop-001'],
      ['shop-000', STATIC_A, 'shop-001'],
      ['shop-001', b, 'shop-000'],
    ] as const) {
      const seen = (await recordsOf(shop, token))!;
      expect(seen.shops).toEqual(new Set([shop]));
      expect(seen.codes).toContain(`ONLY-${shop}`);
      expect(seen.codes).not.toContain(`ONLY-${other}`);
      expect(seen.names.length).toBeGreaterThan(25);
      for (const name of seen.names) expect(name).toMatch(new RegExp(`\\[${shop}\\]$|^only \\[${shop}\\]$`));
    }
    // shop A's tokens (signed and static) on shop B, on the feed and the API path, and B's on A
    for (const [token, shop] of [
      [a, 'shop-001'],
      [STATIC_A, 'shop-001'],
      [b, 'shop-000'],
    ] as const) {
      for (const path of [`/shops/${shop}/relay/v1/feed`, `/shops/${shop}/v2/shop/coupons`]) {
        const answer = await get(path, token);
        expect(answer.status, `${path}`).toBe(401);
        expect(JSON.stringify(answer.body)).not.toMatch(/ONLY-/);
      }
    }
    expect((await get('/shops/shop-001/relay/v1/feed', a)).body.message).toMatch(
      /this till token is for shop "shop-000", and this relay serves shop "shop-001"/,
    );
    // without a token, nothing
    expect((await get('/shops/shop-000/relay/v1/feed')).status).toBe(401);
    // each refusal logged by the relay process, whose lines reach this process a moment after its answers
    const refusals = () =>
      relay
        .logs()
        .filter((l) => l.msg === 'refused')
        .map((l) => l.reason);
    await expect.poll(refusals).toEqual(expect.arrayContaining(['wrong_shop', 'unknown_token']));
  }, 60_000);

  it('answers /healthz, /readyz and /metrics as in single-shop mode', async () => {
    expect(await get('/healthz')).toEqual({ status: 200, body: { ok: true } });
    expect(await get('/readyz')).toEqual({ status: 200, body: { ready: true } });
    const metrics = await fetch(`${relay.url}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    // the shops' upstream calls are counted, and the tills' refusals
    expect(text).toMatch(/^shop_relay_upstream_requests_total\{route="coupons",status="200"\} [1-9]/m);
    expect(text).toMatch(/^shop_relay_refused_total\{reason="wrong_shop"\} [1-9]/m);
    const listening = relay.logs().find((l) => l.msg === 'listening')!;
    expect(listening).toMatchObject({ shops: 2, store: 'redis', hub: true });
  });

  it('adds a shop on SIGHUP and removes one when the file changes, without a restart', async () => {
    const c = signed('shop-002', 'till-c');
    expect((await get('/shops/shop-002/relay/v1/feed', c)).status).toBe(404);
    const two = { 'shop-000': entry('shop-000', { 'front-a': STATIC_A }), 'shop-001': entry('shop-001') };
    writeFileSync(shopsFile, JSON.stringify({ ...two, 'shop-002': entry('shop-002') }));
    relay.signal('SIGHUP');
    // (the file's change is seen by the watch too: one or two reloads, both with the same file)
    await expect.poll(() => recordsOf('shop-002', c), { timeout: 20_000 }).not.toBeNull();
    expect((await recordsOf('shop-002', c))!.codes).toContain('ONLY-shop-002');
    const before = relay.logs().filter((l) => l.msg === 'shops reloaded').length;
    // shop-001 removed: no SIGHUP, the watch sees the file change
    writeFileSync(shopsFile, JSON.stringify({ 'shop-000': two['shop-000'], 'shop-002': entry('shop-002') }));
    const line = await reloaded(before + 1);
    expect(line).toMatchObject({ shops: 2, changed: ['shop-001'] });
    await expect
      .poll(async () => (await get('/shops/shop-001/relay/v1/feed', signed('shop-001', 'till-b'))).status)
      .toBe(404);
    // (from a till's own network: this test's polls of the unknown and removed shops were refusals of this one)
    const till = '203.0.113.7';
    expect((await get('/shops/shop-000/relay/v1/feed', STATIC_A, till)).status).toBe(200);
    // a broken file keeps the shops it had
    writeFileSync(shopsFile, '{ not json');
    relay.signal('SIGHUP');
    await expect.poll(() => relay.logs().some((l) => l.msg === 'shops not reloaded: the old list stays')).toBe(true);
    expect((await get('/shops/shop-002/relay/v1/feed', c, till)).status).toBe(200);
  }, 60_000);

  it('is not blind: listing metrics and lines per shop, and the store lost and back, as in single-shop mode', async () => {
    const metric = async (): Promise<string> => (await fetch(`${relay.url}/metrics`)).text();
    const value = (text: string, series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? NaN : Number(line.slice(series.length + 1));
    };
    // the shops listed in the tests above: counted and logged with their shop
    const text = await metric();
    expect(value(text, 'shop_relay_listings_total{resource="coupons",outcome="committed"}')).toBeGreaterThanOrEqual(2);
    expect(value(text, 'shop_relay_listing_records_total{op="upsert"}')).toBeGreaterThan(25);
    expect(value(text, 'shop_relay_listing_duration_seconds_count{resource="coupons"}')).toBeGreaterThanOrEqual(2);
    // the per-shop gauges carry the shop, for the shops open here
    expect(value(text, 'shop_relay_feed_version{shop="shop-000"}')).toBeGreaterThan(0);
    expect(
      value(text, 'shop_relay_last_listing_age_seconds{shop="shop-000",resource="coupons"}'),
    ).toBeGreaterThanOrEqual(0);
    expect(value(text, 'shop_relay_store_up')).toBe(1);
    expect(value(text, 'shop_relay_store_errors_total')).toBe(0);
    const committed = relay.logs().filter((l) => l.msg === 'listing committed');
    expect(committed.map((l) => l.shopId)).toEqual(expect.arrayContaining(['shop-000', 'shop-001']));
    expect(committed[0]).toMatchObject({ level: 'info', resource: 'coupons', upserts: expect.any(Number), hub: true });

    await redis.stop();
    try {
      await expect.poll(async () => value(await metric(), 'shop_relay_store_up'), { timeout: 20_000 }).toBe(0);
      expect(value(await metric(), 'shop_relay_store_errors_total')).toBe(1);
      expect(value(await metric(), 'shop_relay_ready')).toBe(0);
      // (the log line comes through the process's stdout, maybe after the metric moved)
      await expect.poll(() => relay.logs().filter((l) => l.msg === 'store unreachable').length).toBe(1);
      const lost = relay.logs().filter((l) => l.msg === 'store unreachable');
      expect(lost[0]).toMatchObject({ level: 'error', error: expect.stringContaining('Redis at') });
      // /readyz follows the store as in single-shop mode, and names no Redis host or port
      const ready = await get('/readyz');
      expect(ready).toEqual({
        status: 503,
        body: { ready: false, reason: 'the store is unreachable (its error is in the log)' },
      });
    } finally {
      await redis.start();
    }
    await expect.poll(async () => value(await metric(), 'shop_relay_store_up'), { timeout: 20_000 }).toBe(1);
    expect(value(await metric(), 'shop_relay_store_errors_total')).toBe(1);
    await expect.poll(() => relay.logs().filter((l) => l.msg === 'store reachable again').length).toBe(1);
    await expect.poll(async () => (await get('/readyz')).status, { timeout: 20_000 }).toBe(200);
  }, 90_000);

  it('says in one line which variable is wrong', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ 'shop-000': { key: 'k-000000', secret: '' } }));
    const cases: [Record<string, string>, RegExp][] = [
      [{ SHOPS_FILE: shopsFile, SHOP_API_KEY: 'k' }, /^SHOP_API_KEY is set with SHOPS_FILE: unset it/],
      [
        { SHOPS_FILE: shopsFile, TILL_TOKENS_FILE: shopsFile },
        /^TILL_TOKENS_FILE is set with SHOPS_FILE: unset it .*"tills"/,
      ],
      [
        { SHOPS_FILE: join(dir, 'missing.json'), RELAY_PUBLIC: 'true' },
        /^SHOPS_FILE: cannot read .*missing\.json \(ENOENT\)$/,
      ],
      [{ SHOPS_FILE: bad, RELAY_PUBLIC: 'true' }, /^SHOPS_FILE .*bad\.json, shop shop-000: secret is wrong/],
      [{ SHOPS_FILE: shopsFile, MAX_HOT_SHOPS: '0' }, /^MAX_HOT_SHOPS: expected/],
      [{ SHOPS_FILE: shopsFile, MAX_HOT_RECORDS: '-1' }, /^MAX_HOT_RECORDS: expected/],
    ];
    for (const [env, message] of cases) {
      const run = await runRelayBin([], { PORT: '0', HOST: '127.0.0.1', ...env });
      expect(run.code, run.stderr).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines, run.stderr).toHaveLength(1);
      expect(lines[0]!.replace(/^shop-lookup-relay: /, '')).toMatch(message);
    }
  }, 60_000);

  it('never logs a key, secret or till token', () => {
    const secrets = ['shop-000', 'shop-001', 'shop-002']
      .flatMap((s) => [`key-${s}`, `secret-${s}`])
      .concat(STATIC_A, TOKEN_SECRET);
    expect(everyRelayLine.length).toBeGreaterThan(10);
    for (const line of everyRelayLine) for (const secret of secrets) expect(line).not.toContain(secret);
  });
});
