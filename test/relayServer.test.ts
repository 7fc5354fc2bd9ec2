// The shop-lookup-relay command (relay/server/): its configuration from the environment, till tokens, the
// operators' routes, logs and metrics, bounded connections and long-polls, and its graceful stop. In this process
// through startRelayServer where only behaviour is checked, and as a real process from the bin where the process
// itself is (exit codes, one-line errors, signals). Every log line of every relay run here is checked for secrets.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '../packages/mock-server/src';
import { createMemoryStore, createShopRelay } from '../packages/relay/src';
import type { RelayStore } from '../packages/relay/src/store/relayStore';
import { loadServerPeers, type ServerPeers } from '../packages/relay/src/server/optionalPeers';
import { RELAY_VARIABLES, readRelayConfig, type Environment } from '../packages/relay/src/server/relayServerConfig';
import { startRelayServer, type RelayServer } from '../packages/relay/src/server/startRelayServer';
import { createTillTokens, parseTokenFile, signTillToken } from '../packages/relay/src/server/tillTokens';
import { everyRelayLine, runRelayBin, startRelayBin, type Json } from './relayBin';

const KEY = 'relay-cmd-key-5c1e9a77';
const SECRET = 'relay-cmd-secret-0b7d2f19';
const TOKEN_SECRET = 'till-signing-secret-4a8b6c0d2e1f3a5b7c9d';
const OPS_TOKEN = 'ops-token-9e8d7c6b5a41';
const SHOP = 'cmd-shop';
const STATIC_TOKEN = 'static-till-token-1f2e3d4c5b6a';
const BASE = '/shop-api';

const dir = mkdtempSync(join(tmpdir(), 'shop-lookup-relay-cmd-'));
const tokensFile = join(dir, 'tills.txt');
writeFileSync(tokensFile, `# tills of the test shop\nfront-1 ${STATIC_TOKEN}\n\n`);
const readFile = (path: string): string => readFileSync(path, 'utf8');

let api: MockShopApi;
let peers: ServerPeers;
/** Log lines of the in-process servers. */
const inProcessLines: string[] = [];
/** Every till token handed out here, and the upstream tokens the relays used: none may be logged. */
const tokensSeen = new Set<string>([STATIC_TOKEN]);
const upstreamTokens = new Set<string>();
const capturingFetch: typeof fetch = (input, init) => {
  const token = new Headers(init?.headers).get('access-token');
  if (token) upstreamTokens.add(token);
  return fetch(input, init);
};

function signed(till: string, days = 1, shop = SHOP): string {
  const token = signTillToken({ secret: TOKEN_SECRET, shop, till, expiresAt: Date.now() + days * 86_400_000 });
  tokensSeen.add(token);
  return token;
}

const baseEnv = (): Environment => ({
  SHOP_API_KEY: KEY,
  SHOP_API_SECRET: SECRET,
  SHOP_API_BASE: api.url,
  SHOP_ID: SHOP,
  HOST: '127.0.0.1',
  PORT: '0',
  BASE_PATH: BASE,
  TILL_TOKENS_FILE: tokensFile,
  TILL_TOKEN_SECRET: TOKEN_SECRET,
  LOG_LEVEL: 'info',
});

/** A relay server in this process, its log lines kept; `env` overrides the base environment. */
async function startServer(env: Environment = {}): Promise<RelayServer & { lines: Json[] }> {
  const config = readRelayConfig({ ...baseEnv(), ...env }, readFile);
  if (!config.ok) throw new Error(config.message);
  const lines: Json[] = [];
  const server = await startRelayServer(config.config, {
    peers,
    fetch: capturingFetch,
    logTo: {
      write(line: string) {
        inProcessLines.push(line);
        lines.push(JSON.parse(line) as Json);
      },
    },
  });
  return Object.assign(server, { lines });
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Json | string | null;
}

/** Resolves once the server's first listing is committed (/readyz answers 200). */
async function ready(origin: string): Promise<void> {
  while ((await ask(`${origin}/readyz`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** One request on a connection of its own (no keep-alive pool in between). */
function ask(url: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false, signal }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let body: Json | string | null = text === '' ? null : text;
        try {
          body = JSON.parse(text) as Json;
        } catch {
          // text (metrics) stays text
        }
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Opens a connection that sends nothing; resolves once it is connected. */
function idleSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', () => undefined); // closed by the server: expected
    socket.once('error', reject);
  });
}

beforeAll(async () => {
  // one page of coupons: the relay's own rate limit (list 1/s) stays on, and a listing takes one call
  api = await startMockShopApi({ key: KEY, secret: SECRET, rateLimits: false, data: { coupons: 60 } });
  const loaded = await loadServerPeers({ redis: false });
  if (!loaded.ok) throw new Error(loaded.message);
  peers = loaded.peers;
});

afterAll(async () => {
  await api?.close();
});

describe('relay command: configuration', () => {
  const problem = (env: Environment): string => {
    const result = readRelayConfig(env, readFile);
    if (result.ok) throw new Error('the configuration was accepted');
    return result.message;
  };
  const base = { SHOP_API_KEY: KEY, SHOP_API_SECRET: SECRET, RELAY_PUBLIC: 'true' };

  it('names the variable and what is expected, in one line, and never shows a secret', () => {
    const cases: [Environment, RegExp][] = [
      [{}, /^SHOP_API_KEY is not set: expected the shop's admin API key \(or SHOP_API_KEY_FILE: a file holding it\)$/],
      [{ ...base, PORT: 'abc' }, /^PORT: expected a port number from 0 to 65535 \(got "abc"\)$/],
      [{ ...base, PORT: '70000' }, /^PORT: expected a port number/],
      [{ ...base, SHOP_API_BASE: 'ftp://example.com' }, /^SHOP_API_BASE: expected the shop API origin, an http\(s\) URL \(got "ftp:\/\/example.com"\)$/],
      [{ ...base, REDIS_URL: 'localhost:6379' }, /^REDIS_URL: expected a redis:\/\/ or rediss:\/\/ URL; set it on every instance of a shop \(omitted: one instance, in memory\)$/],
      [{ ...base, TILL_TOKEN_SECRET: 'too-short' }, /^TILL_TOKEN_SECRET: expected the secret signed till tokens are checked with, at least 32 characters$/],
      [{ ...base, PRODUCTS: '13801, x' }, /^PRODUCTS: expected product numbers/],
      [{ ...base, STOREFRONT_OPEN: 'maybe' }, /^STOREFRONT_OPEN: expected true or false/],
      [{ ...base, SHOP_API_SECRET_FILE: join(dir, 'secret') }, /^SHOP_API_SECRET and SHOP_API_SECRET_FILE are both set: set one of them$/],
      [{ SHOP_API_KEY: KEY, SHOP_API_SECRET_FILE: join(dir, 'missing'), RELAY_PUBLIC: 'true' }, /^SHOP_API_SECRET_FILE: cannot read .*missing \(ENOENT\)/],
      [{ SHOP_API_KEY: KEY, SHOP_API_SECRET: SECRET }, /^nobody may ask this relay: set TILL_TOKENS_FILE/],
    ];
    for (const [env, expected] of cases) {
      const message = problem(env);
      expect(message).toMatch(expected);
      expect(message).not.toContain('\n');
      expect(message).not.toContain('too-short');
      expect(message).not.toContain(SECRET);
    }
  });

  it('reads secrets from <NAME>_FILE (a mounted secret), without its trailing newline', () => {
    writeFileSync(join(dir, 'key'), `${KEY}\n`);
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`);
    const result = readRelayConfig({ SHOP_API_KEY_FILE: join(dir, 'key'), SHOP_API_SECRET_FILE: join(dir, 'secret'), STOREFRONT_OPEN: 'true' }, readFile);
    expect(result.ok && result.config).toMatchObject({ key: KEY, secret: SECRET, storefrontOpen: true, port: 8788, host: '0.0.0.0', basePath: '' });
  });

  it('exits 2 with one line on stderr for a missing variable, and 1 with one line for a port in use', async () => {
    const missing = await runRelayBin([], { SHOP_API_SECRET: SECRET, RELAY_PUBLIC: 'true' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("shop-lookup-relay: SHOP_API_KEY is not set: expected the shop's admin API key (or SHOP_API_KEY_FILE: a file holding it)\n");

    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as { port: number }).port;
    try {
      const inUse = await runRelayBin([], { SHOP_API_KEY: KEY, SHOP_API_SECRET: SECRET, SHOP_API_BASE: api.url, RELAY_PUBLIC: 'true', HOST: '127.0.0.1', PORT: String(port) });
      expect(inUse.code).toBe(1);
      expect(inUse.stderr).toBe(`shop-lookup-relay: PORT: port ${port} on 127.0.0.1 is in use: stop the other server or set another PORT\n`);
      expect(inUse.stdout).toBe('');
    } finally {
      taken.close();
    }
  }, 60_000);

  it('names exactly what to npm install when one of its libraries is missing', async () => {
    const notFound = (name: string) => Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/@shop-lookup/relay/dist/shop-lookup-relay.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    const absent = new Set(['pino', 'prom-client']);
    const load = async (name: string) => {
      if (absent.has(name)) throw notFound(name);
      return {};
    };
    expect(await loadServerPeers({ redis: false }, load)).toEqual({
      ok: false,
      message: 'missing pino and prom-client, dependencies of @shop-lookup/relay that the relay command needs: npm install pino@^10 prom-client@^15',
    });
    absent.clear();
    absent.add('redis');
    const redis = await loadServerPeers({ redis: true }, load);
    expect(redis.ok === false && redis.message).toBe(
      'missing redis (REDIS_URL is set), dependencies of @shop-lookup/relay that the relay command needs: npm install redis@^6',
    );
  });

  it('documents every variable in the one table of docs/relay.md', () => {
    const docs = readFileSync(new URL('../docs/relay.md', import.meta.url), 'utf8');
    const deploy = docs.slice(docs.indexOf('## Deploy'));
    for (const name of Object.keys(RELAY_VARIABLES)) expect(deploy).toMatch(new RegExp(`^\\| \`${name}\``, 'm'));
  });
});

describe('relay command: till tokens', () => {
  it('reads a token file of `name token` lines and refuses a malformed one with its line number', () => {
    expect(parseTokenFile(`# comment\nfront-1 ${STATIC_TOKEN}\n\nback-2   ${STATIC_TOKEN}x\n`)).toEqual({
      ok: true,
      entries: [{ name: 'front-1', token: STATIC_TOKEN }, { name: 'back-2', token: `${STATIC_TOKEN}x` }],
    });
    expect(parseTokenFile('front-1 short')).toMatchObject({ ok: false, message: expect.stringMatching(/^line 1: expected `name token`/) });
    expect(parseTokenFile(`a ${STATIC_TOKEN}\na ${STATIC_TOKEN}y`)).toEqual({ ok: false, message: 'line 2: the name a is listed twice' });
  });

  it('accepts a signed token of this shop until it expires; refuses a forged, tampered, foreign or unsigned one', () => {
    let now = Date.now();
    const tokens = createTillTokens({ entries: [{ name: 'front-1', token: STATIC_TOKEN }], secret: TOKEN_SECRET, shop: SHOP, now: () => now });
    const good = signTillToken({ secret: TOKEN_SECRET, shop: SHOP, till: 'front-2', expiresAt: now + 60_000 });
    expect(tokens.check(good)).toEqual({ ok: true, till: 'front-2' });
    expect(tokens.check(STATIC_TOKEN)).toEqual({ ok: true, till: 'front-1' });
    expect(tokens.check(undefined)).toEqual({ ok: false, reason: 'no_token', till: null });
    expect(tokens.check('nope-nope-nope-nope')).toEqual({ ok: false, reason: 'unknown_token', till: null });
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Json;
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, till: 'manager' })).toString('base64url')}.${signature}`;
    expect(tokens.check(tampered)).toEqual({ ok: false, reason: 'bad_signature', till: 'manager' });
    expect(tokens.check(signTillToken({ secret: 'another-secret-of-at-least-32-chars!', shop: SHOP, till: 'x', expiresAt: now + 60_000 }))).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(tokens.check(signTillToken({ secret: TOKEN_SECRET, shop: 'other-shop', till: 'x', expiresAt: now + 60_000 }))).toMatchObject({ ok: false, reason: 'wrong_shop' });
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    expect(tokens.check(none)).toMatchObject({ ok: false, reason: 'unknown_token' });
    now += 61_000;
    expect(tokens.check(good)).toEqual({ ok: false, reason: 'expired', till: 'front-2' });
  });

  it('prints a new till token with `shop-lookup-relay token`, one the relay of that shop accepts', async () => {
    const run = await runRelayBin(['token', '--till', 'front-9', '--days', '30'], { TILL_TOKEN_SECRET: TOKEN_SECRET, SHOP_ID: SHOP });
    expect(run.code).toBe(0);
    const token = run.stdout.trim();
    tokensSeen.add(token);
    expect(run.stderr).toMatch(/^till front-9 of shop cmd-shop, valid until \d{4}-/);
    expect(createTillTokens({ secret: TOKEN_SECRET, shop: SHOP }).check(token)).toEqual({ ok: true, till: 'front-9' });
    const bad = await runRelayBin(['token', '--till', 'front 9'], { TILL_TOKEN_SECRET: TOKEN_SECRET, SHOP_ID: SHOP });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);
});

describe('relay command: serving', () => {
  let server: RelayServer & { lines: Json[] };
  let url: string;
  beforeAll(async () => {
    server = await startServer({ STOREFRONT_OPEN: 'true' });
    url = `${server.origin}${BASE}`;
  });
  afterAll(async () => {
    await server?.stop('test end');
  });

  it('answers tills with a valid token, refuses the others with 401, and logs the refusal with the till name only', async () => {
    await ready(server.origin);
    expect((await ask(`${url}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN))).status).toBe(200);
    expect((await ask(`${url}/relay/v1/feed?limit=1`, { cookie: `theme=dark; shop_lookup_till=${signed('front-3')}` })).status).toBe(200);
    const none = await ask(`${url}/relay/v1/feed?limit=1`);
    expect(none.status).toBe(401);
    expect((none.body as Json).message).toMatch(/send Authorization: Bearer <till token>/);
    const expired = signed('front-4', -1);
    expect((await ask(`${url}/relay/v1/feed?limit=1`, bearer(expired))).status).toBe(401);
    const refusals = server.lines.filter((l) => l.msg === 'refused');
    expect(refusals.map((l) => [l.reason, l.till, l.route])).toEqual([
      ['no_token', null, 'feed'],
      ['expired', 'front-4', 'feed'],
    ]);
    // the storefront routes are open (STOREFRONT_OPEN), the coupon list is not
    expect((await ask(`${url}/v2/shop/coupons/WELCOME10`)).status).toBe(200);
    expect((await ask(`${url}/v2/shop/coupons`)).status).toBe(401);
  });

  it('logs one JSON line per request with its request id, route and status, never the URL or the code asked for', async () => {
    const given = await ask(`${url}/v2/shop/coupons/NO-SUCH-CODE-7781`, { 'x-request-id': 'lb-abc-123' });
    expect(given.headers['x-request-id']).toBe('lb-abc-123');
    const made = await ask(`${url}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN));
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((resolve) => setImmediate(resolve)); // the line is written when the answer is done
    const line = server.lines.find((l) => l.msg === 'request' && l.reqId === 'lb-abc-123');
    expect(line).toMatchObject({ route: 'coupon', method: 'GET', status: expect.any(Number), shop: SHOP, level: 'info' });
    expect(server.lines.find((l) => l.reqId === made.headers['x-request-id'])).toMatchObject({ route: 'feed', status: 200, till: 'front-1' });
    expect(inProcessLines.join('\n')).not.toContain('NO-SUCH-CODE-7781');
  });

  it('serves /healthz to anybody, and status and /metrics to operators only (loopback, or OPS_TOKEN when set)', async () => {
    expect(await ask(`${server.origin}/healthz`)).toMatchObject({ status: 200, body: { ok: true } });
    expect((await ask(`${url}/relay/v1/status`)).status).toBe(200); // loopback, no OPS_TOKEN
    const ops = await startServer({ OPS_TOKEN });
    try {
      const opsUrl = `${ops.origin}${BASE}`;
      expect((await ask(`${opsUrl}/relay/v1/status`, bearer(STATIC_TOKEN))).status).toBe(403);
      expect((await ask(`${ops.origin}/metrics`)).status).toBe(403);
      expect((await ask(`${opsUrl}/relay/v1/status`, bearer(OPS_TOKEN))).status).toBe(200);
      const metrics = await ask(`${ops.origin}/metrics`, bearer(OPS_TOKEN));
      expect(metrics.status).toBe(200);
      expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
      expect(ops.lines.filter((l) => l.msg === 'refused').map((l) => l.reason)).toEqual(['ops_only', 'ops_only']);
    } finally {
      await ops.stop('test end');
    }
  });

  it('bounds OPS_TOKEN guesses per client: past ten a minute /metrics is 429 before the token is compared', async () => {
    const ops = await startServer({ OPS_TOKEN });
    try {
      for (let guess = 0; guess < 10; guess++) expect((await ask(`${ops.origin}/metrics`, bearer(`guess-${guess}`))).status).toBe(403);
      const eleventh = await ask(`${ops.origin}/metrics`, bearer('guess-10'));
      expect(eleventh).toMatchObject({ status: 429, body: { code: 'too_many_requests' } });
      expect(Number(eleventh.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // a right token from that client is answered the same until its minute is over
      expect((await ask(`${ops.origin}/metrics`, bearer(OPS_TOKEN))).status).toBe(429);
    } finally {
      await ops.stop('test end');
    }
  });

  it('exposes the documented metrics, and documents every one of them', async () => {
    const text = (await ask(`${server.origin}/metrics`)).body as string;
    const names = new Set([...text.matchAll(/^# TYPE (shop_relay_\w+) /gm)].map((m) => m[1]!).filter((n) => !/^shop_relay_(process|nodejs)_/.test(n)));
    const docs = readFileSync(new URL('../docs/relay.md', import.meta.url), 'utf8');
    const documented = new Set([...docs.slice(docs.indexOf('## Deploy')).matchAll(/^\| `(shop_relay_\w+)`/gm)].map((m) => m[1]!));
    expect([...names].sort()).toEqual([...documented].sort());
    expect(text).toMatch(/^shop_relay_upstream_requests_total\{route="coupons",status="200"\} [1-9]/m);
    expect(text).toMatch(/^shop_relay_listings_total\{resource="coupons",outcome="committed"\} [1-9]/m);
    expect(text).toMatch(/^shop_relay_feed_version [1-9]/m);
    expect(text).toMatch(/^shop_relay_ready 1$/m);
    expect(text).toMatch(/^shop_relay_refused_total\{reason="no_token"\} [1-9]/m);
  });

  it('is not ready (503, with the reason) until its first listing is committed, and live all along', async () => {
    const hold = api.hold({ path: '/v2/shop/coupons' });
    const fresh = await startServer({ SHOP_ID: 'cmd-shop-fresh' });
    try {
      await hold.arrived;
      expect(await ask(`${fresh.origin}/readyz`)).toMatchObject({
        status: 503,
        headers: { 'retry-after': '5' },
        body: { ready: false, reason: 'no snapshot loaded yet: the first listing of the coupons has not completed' },
      });
      expect((await ask(`${fresh.origin}/healthz`)).status).toBe(200);
      hold.release();
      await ready(fresh.origin);
      expect(await ask(`${fresh.origin}/readyz`)).toMatchObject({ status: 200, body: { ready: true } });
    } finally {
      hold.release();
      await fresh.stop('test end');
    }
  });
});

describe('relay command: bounds (issue 25, item 13)', () => {
  it('past MAX_CONNECTIONS closes connections that carry no request first, so a till and the health route are answered', async () => {
    const server = await startServer({ MAX_CONNECTIONS: '100' });
    const sockets: Socket[] = [];
    try {
      await ready(server.origin);
      for (let i = 0; i < 100; i++) sockets.push(await idleSocket(server.port));
      const closed = sockets.map((s) => new Promise<void>((resolve) => s.once('close', () => resolve())));
      expect((await ask(`${server.origin}${BASE}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN))).status).toBe(200);
      // the till's connection, the 101st, closed the oldest that had not sent anything
      await closed[0];
      expect(sockets.filter((s) => s.destroyed)).toEqual([sockets[0]]);
      sockets.push(await idleSocket(server.port)); // 100 again
      expect((await ask(`${server.origin}/healthz`)).status).toBe(200);
      await closed[1];
    } finally {
      for (const s of sockets) s.destroy();
      await server.stop('test end');
    }
  });

  it('past MAX_CONNECTIONS busy ones, answers 503 with Retry-After, but still /healthz and /readyz', async () => {
    const server = await startServer({ MAX_CONNECTIONS: '100' });
    const stop = new AbortController();
    try {
      await ready(server.origin);
      const head = (await ask(`${server.origin}${BASE}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN))).body as Json;
      const poll = `${server.origin}${BASE}/relay/v1/feed?since=${head.version}&handle=${head.handle}&wait=60`;
      // 100 tills, each with one long-poll parked on a connection of its own
      const polls = Array.from({ length: 100 }, (_, i) => ask(poll, bearer(signed(`busy-${i}`)), stop.signal).catch(() => null));
      for (let i = 0; (await server.relay!.status()).waiting < 100; i++) await new Promise((resolve) => setImmediate(resolve));
      const busy = await ask(`${server.origin}${BASE}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN));
      expect(busy).toMatchObject({ status: 503, headers: { 'retry-after': '5', connection: 'close' }, body: { code: 'relay_busy' } });
      expect((await ask(`${server.origin}/healthz`)).status).toBe(200);
      expect((await ask(`${server.origin}/readyz`)).status).toBe(200);
      stop.abort();
      await Promise.all(polls);
    } finally {
      stop.abort();
      await server.stop('test end');
    }
  });

  it('past MAX_LONG_POLLS answers the next long-poll 503 with Retry-After, and every other request as usual', async () => {
    const server = await startServer({ MAX_LONG_POLLS: '2' });
    const stop = new AbortController();
    try {
      await ready(server.origin);
      const feed = `${server.origin}${BASE}/relay/v1/feed`;
      const head = (await ask(`${feed}?limit=1`, bearer(STATIC_TOKEN))).body as Json;
      const poll = `${feed}?since=${head.version}&handle=${head.handle}&wait=60`;
      const parked = [ask(poll, bearer(signed('lp-1')), stop.signal).catch(() => null), ask(poll, bearer(signed('lp-2')), stop.signal).catch(() => null)];
      while ((await server.relay!.status()).waiting < 2) await new Promise((resolve) => setImmediate(resolve));
      const third = await ask(poll, bearer(signed('lp-3')));
      expect(third).toMatchObject({ status: 503, headers: { 'retry-after': '5' }, body: { code: 'relay_busy' } });
      expect((await ask(`${feed}?limit=1`, bearer(signed('lp-3')))).status).toBe(200);
      expect((await ask(`${server.origin}${BASE}/v2/shop/coupons/WELCOME10`, bearer(STATIC_TOKEN))).status).toBe(200);
      expect((await ask(`${server.origin}/healthz`)).status).toBe(200);
      stop.abort();
      await Promise.all(parked);
    } finally {
      stop.abort();
      await server.stop('test end');
    }
  });

  it('closes a connection whose headers do not arrive within HEADERS_TIMEOUT_MS', async () => {
    const server = await startServer({ HEADERS_TIMEOUT_MS: '1000' });
    try {
      const socket = await idleSocket(server.port);
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'); // and never the blank line
      let text = '';
      socket.on('data', (chunk) => (text += String(chunk)));
      await new Promise<void>((resolve) => socket.once('close', () => resolve()));
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await server.stop('test end');
    }
  });
});

describe('relay command: stopping', () => {
  it('on SIGTERM answers a parked long-poll at once, refuses new connections and exits 0', async () => {
    const relay = await startRelayBin({ ...(baseEnv() as Record<string, string>), SHOP_ID: 'cmd-shop-stop' });
    const feed = `${relay.url}${BASE}/relay/v1/feed`;
    await ready(relay.url);
    const head = (await ask(`${feed}?limit=1`, bearer(STATIC_TOKEN))).body as Json;
    const parked = ask(`${feed}?since=${head.version}&handle=${head.handle}&wait=60`, bearer(STATIC_TOKEN));
    for (;;) {
      const status = (await ask(`${relay.url}${BASE}/relay/v1/status`)).body as Json;
      if (status.waiting === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    relay.signal('SIGTERM');
    const answered = await parked;
    expect(answered.status).toBe(200);
    expect(answered.headers.connection).toBe('close');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
    await expect(ask(`${relay.url}/healthz`)).rejects.toThrow(/ECONNREFUSED/);
    const messages = relay.logs().map((l) => l.msg);
    expect(messages.slice(messages.indexOf('shutting down'))).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
    expect(relay.logs().find((l) => l.msg === 'shutting down')).toMatchObject({ reason: 'SIGTERM', parked: 1 });
  }, 60_000);

  it('closes only after the commit under way has finished, then gives up the sync lease', async () => {
    const memory = createMemoryStore();
    let letCommit!: () => void;
    const commitHeld = new Promise<void>((resolve) => (letCommit = resolve));
    let committing!: () => void;
    const commitStarted = new Promise<void>((resolve) => (committing = resolve));
    const events: string[] = [];
    const store: RelayStore = {
      ...memory,
      async commitListing(commit) {
        committing();
        await commitHeld;
        const head = await memory.commitListing(commit);
        events.push('committed');
        return head;
      },
    };
    const relay = createShopRelay({
      key: KEY, secret: SECRET, target: api.url, store, rateLimits: false, public: true,
      observer: { lease: (held) => events.push(held ? 'lease taken' : 'lease given up') },
    });
    await relay.ready;
    await commitStarted;
    let closed = false;
    const closing = relay.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    letCommit();
    await closing;
    expect(events).toEqual(['lease taken', 'committed', 'lease given up']);
    expect((await memory.head()).confirmedAt.coupons).toBeGreaterThan(0);
  });
});

describe('relay command: logs', () => {
  it('never wrote the key, the secret, the signing secret, the ops token, a till token or the upstream token', () => {
    const lines = [...inProcessLines, ...everyRelayLine];
    expect(lines.length).toBeGreaterThan(50);
    expect(upstreamTokens.size).toBeGreaterThan(0);
    const secrets = [KEY, SECRET, TOKEN_SECRET, OPS_TOKEN, ...tokensSeen, ...upstreamTokens];
    const leaks = lines.filter((line) => secrets.some((s) => line.includes(s)));
    expect(leaks).toEqual([]);
  });
});
