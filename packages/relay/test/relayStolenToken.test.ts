// A till token in the wrong hands (issue 39), against the shop-lookup-relay command: one valid token costs the shop
// that till's access, not the relay's CPU or Redis memory, and not the other tills'. Made-up and altered snapshot
// cursors are refused before anything is read, compressed or kept (a single relay on Redis and a hub, as processes);
// the refused-request bound counts per network before the token is looked at, so past it the right token is refused
// like a wrong one (single in memory, single on Redis, hub); a token removed from the file or signed with a rotated
// secret ends its parked long-poll with 401 at the reload, before the data it waited for (processes, on Redis).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { loadServerPeers, type ServerPeers } from '../src/server/optionalPeers';
import { readRelayConfig, type Environment } from '../src/server/relayServerConfig';
import { startRelayServer, type RelayServer } from '../src/server/startRelayServer';
import { signTillToken } from '../src/server/tillTokens';
import { startRelayBin, type Json, type RelayBinProcess } from '@shop-lookup/test-kit/relayBin';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';

const KEY = 'stolen-token-key-3e7a91';
const SECRET = 'stolen-token-secret-8c2d44';
const SIGNING = 'stolen-token-signing-secret-0a1b2c3d4e5f6a7b';
const ROTATED = 'stolen-token-signing-secret-rotated-9f8e7d6c';
const FRONT = 'static-till-front-1-6d5c4b3a2f1e';
const BACK = 'static-till-back-2-1a2b3c4d5e6f';
const COUPONS = 2_500;

const dir = mkdtempSync(join(tmpdir(), 'shop-lookup-stolen-'));
const readFile = (path: string): string => readFileSync(path, 'utf8');

let api: MockShopApi;
let redis: RedisServer;
let peers: ServerPeers;

beforeAll(async () => {
  [api, redis] = await Promise.all([
    startMockShopApi({ key: KEY, secret: SECRET, rateLimits: false, data: { coupons: COUPONS } }),
    startRedisServer(),
  ]);
  const loaded = await loadServerPeers({ redis: true });
  if (!loaded.ok) throw new Error(loaded.message);
  peers = loaded.peers;
}, 60_000);

afterAll(async () => {
  await Promise.all([api?.close(), redis?.stop()]);
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Json;
}

/** One GET on a connection of its own. */
function ask(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let body: Json = {};
        try {
          body = JSON.parse(text) as Json;
        } catch {
          // a compressed body: only its status and headers are read
        }
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const bearer = (token: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...more });
const signed = (shop: string, till: string, secret = SIGNING): string =>
  signTillToken({ secret, shop, till, expiresAt: Date.now() + 86_400_000 });

/** Keys of the snapshot chunks kept in Redis for `shop`. */
async function keptKeys(shop: string): Promise<string[]> {
  const client = createClient({ url: redis.url });
  await client.connect();
  const keys = await client.keys(`shop-lookup:{${shop}}:kept:*`);
  await client.close();
  return keys;
}

/** A cursor as relays before signed cursors handed them out: any position the asker likes. */
const madeUp = (version: number, after: string): string =>
  Buffer.from(JSON.stringify([version, after]), 'utf8').toString('base64url');

/** The command's server in this process (its config read as the command reads it), silent. */
async function startServer(env: Environment): Promise<RelayServer> {
  const config = readRelayConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...env }, readFile);
  if (!config.ok) throw new Error(config.message);
  return startRelayServer(config.config, { peers, logTo: { write: () => undefined } });
}

/** Where a relay of the command serves one shop: the feed, and the status that says what it compressed. */
interface ShopUnder {
  feed: string;
  status: string;
}

/** Resolves once the shop's first listing is in (its feed answers the till); also outside a test (beforeAll). */
async function readyFeed(shop: ShopUnder, token: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await ask(`${shop.feed}?limit=1`, bearer(token))).status !== 200) {
    if (Date.now() > deadline) throw new Error(`${shop.feed} did not answer within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('made-up snapshot cursors, against the command on Redis', () => {
  async function refusesMadeUpCursors(shop: string, where: ShopUnder, token: string): Promise<void> {
    await readyFeed(where, token);
    const br = { 'accept-encoding': 'br' };
    const compressed = async (): Promise<number> => (await ask(where.status)).body.chunksCompressed as number;
    // a till reads the first two chunks (1,000 coupons each): each compressed once and kept for the other instances
    const first = await ask(`${where.feed}?limit=1000`, bearer(token, br));
    expect(first).toMatchObject({ status: 200, headers: { 'content-encoding': 'br' } });
    const plain = (await ask(`${where.feed}?limit=1000`, bearer(token))).body;
    const second = await ask(`${where.feed}?cursor=${plain.cursor}&handle=${plain.handle}`, bearer(token, br));
    expect(second.status).toBe(200);
    const kept = await keptKeys(shop);
    expect(kept).toHaveLength(2);
    const before = await compressed();

    // what one stolen token tries: positions it makes up, a signed cursor it alters, another chunk size
    const refused: Answer[] = [];
    for (let i = 0; i < 20; i++) {
      const cursor = madeUp(plain.version, `coupons\u0000MADE-UP-${i}`);
      refused.push(await ask(`${where.feed}?cursor=${cursor}&handle=${plain.handle}&limit=1000`, bearer(token, br)));
    }
    // none of them was compressed or kept
    expect((await keptKeys(shop)).sort()).toEqual(kept.sort());
    expect(await compressed()).toBe(before);
    // an unsigned cursor is one no relay hands out any more: the till starts its snapshot again
    for (const answer of refused) expect(answer).toMatchObject({ status: 409, body: { code: 'must_refetch' } });

    // a signed cursor: altered, with a made-up signature, for another chunk size, or asked with another limit
    expect(plain.cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const [payload, mac] = (plain.cursor as string).split('.') as [string, string];
    const [version, limit, after] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [
      number,
      number,
      string,
    ];
    const altered = `${Buffer.from(JSON.stringify([version, limit, `${after}0`])).toString('base64url')}.${mac}`;
    const forged = `${payload}.${'A'.repeat(43)}`;
    const bigger = `${Buffer.from(JSON.stringify([version, 10_000, after])).toString('base64url')}.${mac}`;
    const tampered = [
      await ask(`${where.feed}?cursor=${altered}&handle=${plain.handle}`, bearer(token, br)),
      await ask(`${where.feed}?cursor=${forged}&handle=${plain.handle}`, bearer(token, br)),
      await ask(`${where.feed}?cursor=${bigger}&handle=${plain.handle}`, bearer(token, br)),
      await ask(`${where.feed}?cursor=${plain.cursor}&handle=${plain.handle}&limit=10`, bearer(token, br)),
    ];
    for (const answer of tampered) expect(answer).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(tampered[0]!.body.message).toMatch(/cursor is not one this relay handed out/);
    expect(tampered[3]!.body.message).toMatch(/limit must stay the one this snapshot started with \(1000\)/);
    expect((await keptKeys(shop)).sort()).toEqual(kept.sort());
    expect(await compressed()).toBe(before);
    // the real cursor still reads on
    expect((await ask(`${where.feed}?cursor=${plain.cursor}&handle=${plain.handle}`, bearer(token))).status).toBe(200);
  }

  it('refuses made-up and altered cursors before it reads, compresses or keeps anything (a single relay)', async () => {
    const shop = 'stolen-cursor-single';
    const relay = await startRelayBin({
      SHOP_API_KEY: KEY,
      SHOP_API_SECRET: SECRET,
      SHOP_API_TARGET: api.url,
      SHOP_API_RATE_LIMITS: 'off',
      SHOP_ID: shop,
      REDIS_URL: redis.url,
      TILL_TOKEN_SECRET: SIGNING,
    });
    try {
      await refusesMadeUpCursors(
        shop,
        { feed: `${relay.url}/relay/v1/feed`, status: `${relay.url}/relay/v1/status` },
        signed(shop, 'front-1'),
      );
    } finally {
      await relay.kill();
    }
  }, 90_000);

  it('refuses made-up and altered cursors before it reads, compresses or keeps anything (a hub)', async () => {
    const shop = 'stolen-cursor-hub';
    const shopsFile = join(dir, 'cursor-shops.json');
    writeFileSync(shopsFile, JSON.stringify({ [shop]: { key: KEY, secret: SECRET, target: api.url } }));
    const relay = await startRelayBin({
      SHOPS_FILE: shopsFile,
      SHOP_API_RATE_LIMITS: 'off',
      REDIS_URL: redis.url,
      TILL_TOKEN_SECRET: SIGNING,
    });
    try {
      const under = `${relay.url}/shops/${shop}/relay/v1`;
      await refusesMadeUpCursors(shop, { feed: `${under}/feed`, status: `${under}/status` }, signed(shop, 'front-1'));
    } finally {
      await relay.kill();
    }
  }, 90_000);
});

describe("the refused-request bound counts per network, before the token names the till (the command's server)", () => {
  const tokensFile = join(dir, 'bound-tills.txt');
  writeFileSync(tokensFile, `front-1 ${FRONT}\n`);

  async function boundsTheRightToken(feed: string, token: string): Promise<void> {
    // a guesser behind 198.51.100.0/24 (the balancer in front appends its address: TRUST_PROXY_HOPS=1)
    const from = (address: string) => ({ 'x-forwarded-for': address });
    for (let guess = 0; guess < 10; guess++) {
      const answer = await ask(
        `${feed}?limit=1`,
        bearer(`wrong-token-guess-${guess}-0000`, from(`198.51.100.${guess}`)),
      );
      expect(answer.status, `guess ${guess}`).toBe(401);
    }
    expect((await ask(`${feed}?limit=1`, bearer('wrong-token-guess-10-0000', from('198.51.100.77')))).status).toBe(429);
    // the right token from that network gets the same 429: the bound is no oracle
    const right = await ask(`${feed}?limit=1`, bearer(token, from('198.51.100.200')));
    expect(right).toMatchObject({ status: 429, body: { code: 'too_many_requests' } });
    expect(Number(right.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // the same till from another network is served
    expect((await ask(`${feed}?limit=1`, bearer(token, from('203.0.113.9')))).status).toBe(200);
  }

  const single = (shop: string): Environment => ({
    SHOP_API_KEY: KEY,
    SHOP_API_SECRET: SECRET,
    SHOP_API_TARGET: api.url,
    SHOP_API_RATE_LIMITS: 'off',
    SHOP_ID: shop,
    TILL_TOKENS_FILE: tokensFile,
    TILL_TOKEN_SECRET: SIGNING,
    TRUST_PROXY_HOPS: '1',
  });

  it('in memory: past ten refusals a minute, the right token from that network is 429 too', async () => {
    const server = await startServer(single('bound-memory'));
    try {
      await readyFeed({ feed: `${server.origin}/relay/v1/feed`, status: '' }, FRONT);
      await boundsTheRightToken(`${server.origin}/relay/v1/feed`, FRONT);
    } finally {
      await server.stop('test end');
    }
  }, 60_000);

  it('on Redis: past ten refusals a minute, the right token from that network is 429 too', async () => {
    const server = await startServer({ ...single('bound-redis'), REDIS_URL: redis.url });
    try {
      await readyFeed({ feed: `${server.origin}/relay/v1/feed`, status: '' }, FRONT);
      await boundsTheRightToken(`${server.origin}/relay/v1/feed`, signed('bound-redis', 'front-2'));
    } finally {
      await server.stop('test end');
    }
  }, 60_000);

  it('in a hub on Redis: past ten refusals a minute, the right token from that network is 429 too', async () => {
    const shop = 'bound-hub';
    const shopsFile = join(dir, 'bound-shops.json');
    writeFileSync(shopsFile, JSON.stringify({ [shop]: { key: KEY, secret: SECRET, target: api.url } }));
    const server = await startServer({
      SHOPS_FILE: shopsFile,
      SHOP_API_RATE_LIMITS: 'off',
      REDIS_URL: redis.url,
      TILL_TOKEN_SECRET: SIGNING,
      TRUST_PROXY_HOPS: '1',
    });
    try {
      const feed = `${server.origin}/shops/${shop}/relay/v1/feed`;
      const token = signed(shop, 'front-1');
      await readyFeed({ feed, status: '' }, token);
      await boundsTheRightToken(feed, token);
    } finally {
      await server.stop('test end');
    }
  }, 60_000);
});

describe('a revoked till token ends its parked long-poll at the reload, against the command on Redis', () => {
  /** Parks a long-poll of each token (the head as it stands), resolves once the relay holds them all. */
  async function park(shop: ShopUnder, tokens: string[]): Promise<Promise<Answer>[]> {
    const head = (await ask(`${shop.feed}?limit=1`, bearer(tokens[0]!))).body;
    const polls = tokens.map((token) =>
      ask(`${shop.feed}?since=${head.version}&handle=${head.handle}&wait=60`, bearer(token)),
    );
    await expect.poll(async () => (await ask(shop.status)).body.waiting, { timeout: 20_000 }).toBe(tokens.length);
    return polls;
  }

  /** Revokes (`revoke` then SIGHUP), then changes a coupon: the revoked polls are 401, the kept one gets the change. */
  async function endsRevoked(
    relay: RelayBinProcess,
    shop: ShopUnder,
    tokens: { revoked: string[]; kept: string },
    revoke: () => void | Promise<void>,
  ): Promise<void> {
    const [kept, ...revoked] = await park(shop, [tokens.kept, ...tokens.revoked]);
    const reloads = relay.logs().filter((l) => /reloaded/.test(String(l.msg))).length;
    await revoke();
    relay.signal('SIGHUP');
    await expect
      .poll(() => relay.logs().filter((l) => /reloaded/.test(String(l.msg))).length, { timeout: 20_000 })
      .toBeGreaterThan(reloads);
    // the data they waited for arrives after the reload (REFRESH_INTERVAL_MS: the next listing sees it)
    const coupon = api.data.coupons[3]!;
    api.upsertCoupon({ ...coupon, apply_sale_price: Number(coupon.apply_sale_price ?? 0) + 1 });
    for (const poll of revoked) {
      const answer = await poll;
      expect(answer).toMatchObject({ status: 401, body: { code: 'unauthorized', refusal: { route: 'feed' } } });
      expect(answer.body.upserts).toBeUndefined();
    }
    const served = await kept!;
    expect(served.status).toBe(200);
    expect(served.body.upserts.map((u: Json) => u.key)).toContain(coupon.coupon_code);
    expect(
      relay
        .logs()
        .filter((l) => l.msg === 'long-polls of revoked tokens ended')
        .at(-1),
    ).toMatchObject({
      ended: revoked.length,
    });
  }

  describe('a single relay', () => {
    const shop = 'revoke-single';
    const tokensFile = join(dir, 'revoke-tills.txt');
    const secretFile = join(dir, 'revoke-signing');
    let relay: RelayBinProcess;
    let where: ShopUnder;
    beforeAll(async () => {
      writeFileSync(tokensFile, `front-1 ${FRONT}\nback-2 ${BACK}\n`);
      writeFileSync(secretFile, `${SIGNING}\n`);
      relay = await startRelayBin({
        SHOP_API_KEY: KEY,
        SHOP_API_SECRET: SECRET,
        SHOP_API_TARGET: api.url,
        SHOP_API_RATE_LIMITS: 'off',
        SHOP_ID: shop,
        REDIS_URL: redis.url,
        TILL_TOKENS_FILE: tokensFile,
        TILL_TOKEN_SECRET_FILE: secretFile,
        REFRESH_INTERVAL_MS: '1000',
      });
      where = { feed: `${relay.url}/relay/v1/feed`, status: `${relay.url}/relay/v1/status` };
      await readyFeed(where, FRONT);
    }, 60_000);
    afterAll(() => relay?.kill());

    it('a static token removed from TILL_TOKENS_FILE, then SIGHUP: its parked long-poll is 401', async () => {
      // the back office's till token is lost: the shop deletes its line and sends SIGHUP
      await endsRevoked(relay, where, { revoked: [BACK], kept: FRONT }, () =>
        writeFileSync(tokensFile, `front-1 ${FRONT}\n`),
      );
    }, 60_000);

    it('TILL_TOKEN_SECRET_FILE rotated, then SIGHUP: the parked long-polls of tokens signed with the old one are 401', async () => {
      const old = [signed(shop, 'front-3'), signed(shop, 'front-4')];
      await endsRevoked(relay, where, { revoked: old, kept: FRONT }, () => writeFileSync(secretFile, `${ROTATED}\n`));
      expect((await ask(`${where.feed}?limit=1`, bearer(signed(shop, 'front-5', ROTATED)))).status).toBe(200);
    }, 60_000);
  });

  describe('a hub', () => {
    const shop = 'revoke-hub';
    const shopsFile = join(dir, 'revoke-shops.json');
    const secretFile = join(dir, 'revoke-hub-signing');
    const shops = (tills: Record<string, string>) =>
      JSON.stringify({ [shop]: { key: KEY, secret: SECRET, target: api.url, tills } });
    let relay: RelayBinProcess;
    let where: ShopUnder;
    beforeAll(async () => {
      writeFileSync(shopsFile, shops({ 'front-1': FRONT, 'back-2': BACK }));
      writeFileSync(secretFile, `${SIGNING}\n`);
      relay = await startRelayBin({
        SHOPS_FILE: shopsFile,
        SHOP_API_RATE_LIMITS: 'off',
        REDIS_URL: redis.url,
        TILL_TOKEN_SECRET_FILE: secretFile,
        REFRESH_INTERVAL_MS: '1000',
      });
      const under = `${relay.url}/shops/${shop}/relay/v1`;
      where = { feed: `${under}/feed`, status: `${under}/status` };
      await readyFeed(where, FRONT);
    }, 60_000);
    afterAll(() => relay?.kill());

    it("a shop's static token removed from SHOPS_FILE, then SIGHUP: its parked long-poll is 401", async () => {
      await endsRevoked(relay, where, { revoked: [BACK], kept: FRONT }, () =>
        writeFileSync(shopsFile, shops({ 'front-1': FRONT })),
      );
    }, 60_000);

    it('TILL_TOKEN_SECRET_FILE rotated, then SIGHUP: the parked long-polls of tokens signed with the old one are 401', async () => {
      const old = [signed(shop, 'front-3'), signed(shop, 'front-4')];
      await endsRevoked(relay, where, { revoked: old, kept: FRONT }, () => writeFileSync(secretFile, `${ROTATED}\n`));
      expect((await ask(`${where.feed}?limit=1`, bearer(signed(shop, 'front-5', ROTATED)))).status).toBe(200);
    }, 60_000);
  });

  it('a signed token that expired while its long-poll was parked is ended at the next reload (signed tokens only)', async () => {
    const shop = 'revoke-expired';
    const env: Environment = {
      SHOP_API_KEY: KEY,
      SHOP_API_SECRET: SECRET,
      SHOP_API_TARGET: api.url,
      SHOP_API_RATE_LIMITS: 'off',
      SHOP_ID: shop,
      TILL_TOKEN_SECRET: SIGNING,
    };
    const server = await startServer(env);
    try {
      const where = { feed: `${server.origin}/relay/v1/feed`, status: `${server.origin}/relay/v1/status` };
      const kept = signed(shop, 'front-1');
      await readyFeed(where, kept);
      const expiresAt = Date.now() + 3_000;
      const short = signTillToken({ secret: SIGNING, shop, till: 'front-6', expiresAt });
      const [, parked] = await park(where, [kept, short]);
      // waited out, not asked (a refused request would count against this network); then a reload, nothing changed
      await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 1_100));
      const config = readRelayConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...env }, readFile);
      await server.reload(config.ok ? config.config : undefined);
      expect(await parked).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
      expect((await ask(where.status)).body.waiting).toBe(1);
    } finally {
      await server.stop('test end');
    }
  }, 60_000);
});
