// The shop-lookup-relay command (relay/server/): its configuration from the environment, till tokens, the
// operators' routes, logs and metrics, bounded connections and long-polls, and its graceful stop. In this process
// through startRelayServer where only behaviour is checked, and as a real process from the bin where the process
// itself is (exit codes, one-line errors, signals). Every log line of every relay run here is checked for secrets.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createMemoryStore, createShopRelay } from '../src';
import type { RelayStore } from '../src/store/relayStore';
import { loadServerPeers, type ServerPeers } from '../src/server/optionalPeers';
import { configWarnings } from '../src/server/configWarnings';
import { readRelayConfig, type Environment } from '../src/server/relayServerConfig';
import { relayEnvTable, writtenEnvTable } from '../src/server/relayEnvTable';
import { RELAY_VARIABLES, type RelayVariable } from '../src/server/relayVariables';
import { startRelayServer, type RelayServer } from '../src/server/startRelayServer';
import { createTillTokens, parseTokenFile, signTillToken } from '../src/server/tillTokens';
import {
  everyRelayLine,
  runRelayBin,
  startRelayBin,
  type Json,
  type RelayBinProcess,
} from '@shop-lookup/test-kit/relayBin';
import { startRedisServer } from '@shop-lookup/test-kit/redisServer';

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
  SHOP_API_TARGET: api.url,
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
function ask(url: string, headers: Record<string, string> = {}, signal?: AbortSignal, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false, signal }, (res) => {
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
      [
        { ...base, SHOP_API_TARGET: 'ftp://example.com' },
        /^SHOP_API_TARGET: expected the shop API origin, an http\(s\) URL \(createShopRelay's target\) \(got "ftp:\/\/example.com"\)$/,
      ],
      // a name the command does not read is an error naming the one meant, never ignored (the relay would list the
      // real API)
      [
        { ...base, SHOP_API_BASE: 'http://127.0.0.1:8787' },
        /^SHOP_API_BASE is not a variable of shop-lookup-relay: set SHOP_API_TARGET instead \(the shop API origin, an http\(s\) URL/,
      ],
      [
        { ...base, SHOP_API_TOKEN: 'too-short' },
        /^SHOP_API_TOKEN is not a variable of shop-lookup-relay; its SHOP_API_ variables are SHOP_API_KEY, SHOP_API_KEY_FILE, SHOP_API_SECRET, SHOP_API_SECRET_FILE, SHOP_API_TARGET, SHOP_API_RATE_LIMITS$/,
      ],
      [
        { ...base, REDIS_URL: 'localhost:6379' },
        /^REDIS_URL: expected a redis:\/\/ or rediss:\/\/ URL; set it on every instance of a shop \(omitted: one instance, in memory\)$/,
      ],
      [
        { ...base, TILL_TOKEN_SECRET: 'too-short' },
        /^TILL_TOKEN_SECRET: expected the secret signed till tokens are checked with, at least 32 characters$/,
      ],
      [{ ...base, PRODUCTS: '13801, x' }, /^PRODUCTS: expected product numbers/],
      [{ ...base, STOREFRONT_OPEN: 'maybe' }, /^STOREFRONT_OPEN: expected true or false/],
      [
        { ...base, SHOP_API_SECRET_FILE: join(dir, 'secret') },
        /^SHOP_API_SECRET and SHOP_API_SECRET_FILE are both set: set one of them$/,
      ],
      [
        { SHOP_API_KEY: KEY, SHOP_API_SECRET_FILE: join(dir, 'missing'), RELAY_PUBLIC: 'true' },
        /^SHOP_API_SECRET_FILE: cannot read .*missing \(ENOENT\)/,
      ],
      [{ SHOP_API_KEY: KEY, SHOP_API_SECRET: SECRET }, /^nobody may ask this relay: set TILL_TOKENS_FILE/],
      // as a hub's shop ids: `.` and `..` name no shop (nor a Redis hash tag or a path segment)
      [
        { ...base, SHOP_ID: '..' },
        /^SHOP_ID: expected a name for the shop of 1 to 64 letters, .*starting with a letter or digit.* \(got "\.\."\)$/,
      ],
      [{ ...base, SHOP_ID: '.' }, /^SHOP_ID: expected /],
      [{ ...base, SHOP_ID: '-shop' }, /^SHOP_ID: expected /],
      [
        { ...base, CORS_ORIGINS: 'https://till.example, https://till.example/pos' },
        /^CORS_ORIGINS: expected origins of till pages .*no '\*'\) \(got "https:\/\/till.example, https:\/\/till.example\/pos"\)$/,
      ],
      [{ ...base, CORS_ORIGINS: '*' }, /^CORS_ORIGINS: expected origins/],
    ];
    for (const [env, expected] of cases) {
      const message = problem(env);
      expect(message).toMatch(expected);
      expect(message).not.toContain('\n');
      expect(message).not.toContain('too-short');
      expect(message).not.toContain(SECRET);
    }
  });

  it('reads CORS_ORIGINS as a list of origins, separated by commas', () => {
    const result = readRelayConfig(
      { ...base, CORS_ORIGINS: ' https://till.example ,http://127.0.0.1:5173,' },
      readFile,
    );
    expect(result.ok && result.config.corsOrigins).toEqual(['https://till.example', 'http://127.0.0.1:5173']);
    expect(readRelayConfig(base, readFile)).toMatchObject({ ok: true, config: { corsOrigins: [] } });
  });

  it("refuses a '*' in CORS_ORIGINS at start, in one line naming it: browsers match origins whole, no wildcard works", async () => {
    for (const origins of ['https://*.till.example', 'https://till.example,https://*', '*']) {
      const result = readRelayConfig({ ...base, CORS_ORIGINS: origins }, readFile);
      expect(result.ok, origins).toBe(false);
      expect(!result.ok && result.message).toMatch(/^CORS_ORIGINS: expected .*no '\*'\)/);
    }
    const started = await runRelayBin([], {
      ...(baseEnv() as Record<string, string>),
      CORS_ORIGINS: 'https://*.till.example',
    });
    expect(started.code).toBe(2);
    expect(started.stderr.trim().split('\n')).toHaveLength(1);
    expect(started.stderr).toMatch(/^shop-lookup-relay: CORS_ORIGINS: expected /);
  }, 60_000);

  it('warns once at start for an http:// origin in CORS_ORIGINS (loopback pages exempt), and starts', async () => {
    const server = await startServer({
      CORS_ORIGINS: 'http://till.example,https://secure.example,http://localhost:5173,http://127.0.0.1:5173',
    });
    try {
      const warned = server.lines.filter((l) => /^CORS_ORIGINS names pages served over http:\/\//.test(l.msg));
      expect(warned).toEqual([expect.objectContaining({ level: 'warn', origins: ['http://till.example'] })]);
      expect(server.lines.some((l) => /TRUST_PROXY_HOPS/.test(l.msg))).toBe(false);
    } finally {
      await server.stop('test end');
    }
    const quiet = await startServer({ CORS_ORIGINS: 'https://secure.example,http://localhost:5173' });
    await quiet.stop('test end');
    expect(quiet.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('warns when proxy hops are trusted on an address clients could reach directly, not on loopback or private ones', () => {
    const warns = (host: string, trustProxyHops = 1): boolean =>
      configWarnings({ host, trustProxyHops, corsOrigins: [] }).some((w) => /^TRUST_PROXY_HOPS/.test(w.message));
    for (const host of ['0.0.0.0', '::', '203.0.113.5', '2001:db8::5', 'relay.example'])
      expect(warns(host), host).toBe(true);
    for (const host of ['127.0.0.1', 'localhost', '::1', '10.0.0.5', '172.20.1.2', '192.168.1.10', 'fd12::5'])
      expect(warns(host), host).toBe(false);
    expect(warns('0.0.0.0', 0)).toBe(false);
  });

  it("reads MAX_USES (default 100,000) and MAX_USES_PER_TILL (default none: the relay's share), one till never more than the shop", () => {
    expect(readRelayConfig(base, readFile)).toMatchObject({
      ok: true,
      config: { maxUses: 100_000, maxUsesPerTill: undefined },
    });
    expect(readRelayConfig({ ...base, MAX_USES: '20000', MAX_USES_PER_TILL: '500' }, readFile)).toMatchObject({
      ok: true,
      config: { maxUses: 20_000, maxUsesPerTill: 500 },
    });
    expect(readRelayConfig({ ...base, MAX_USES: '1000', MAX_USES_PER_TILL: '2000' }, readFile)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^MAX_USES_PER_TILL \(2000\) is more than MAX_USES \(1000\)/),
    });
    expect(readRelayConfig({ ...base, MAX_USES: 'lots' }, readFile)).toMatchObject({
      ok: false,
      message: expect.stringContaining('MAX_USES'),
    });
  });

  it('reads USES_RETENTION_DAYS as whole days (default 30)', () => {
    expect(readRelayConfig({ ...base, USES_RETENTION_DAYS: '7' }, readFile)).toMatchObject({
      ok: true,
      config: { usesRetentionMs: 7 * 86_400_000 },
    });
    expect(readRelayConfig(base, readFile)).toMatchObject({ ok: true, config: { usesRetentionMs: 30 * 86_400_000 } });
    expect(readRelayConfig({ ...base, USES_RETENTION_DAYS: '0' }, readFile)).toMatchObject({
      ok: false,
      message: expect.stringContaining('USES_RETENTION_DAYS'),
    });
  });

  it('reads secrets from <NAME>_FILE (a mounted secret), without its trailing newline', () => {
    writeFileSync(join(dir, 'key'), `${KEY}\n`);
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`);
    const result = readRelayConfig(
      { SHOP_API_KEY_FILE: join(dir, 'key'), SHOP_API_SECRET_FILE: join(dir, 'secret'), STOREFRONT_OPEN: 'true' },
      readFile,
    );
    expect(result.ok && result.config).toMatchObject({
      key: KEY,
      secret: SECRET,
      storefrontOpen: true,
      port: 8788,
      host: '0.0.0.0',
      basePath: '',
    });
  });

  it('exits 2 with one line on stderr for a missing variable, and 1 with one line for a port in use', async () => {
    const missing = await runRelayBin([], { SHOP_API_SECRET: SECRET, RELAY_PUBLIC: 'true' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      "shop-lookup-relay: SHOP_API_KEY is not set: expected the shop's admin API key (or SHOP_API_KEY_FILE: a file holding it)\n",
    );

    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as { port: number }).port;
    try {
      const inUse = await runRelayBin([], {
        SHOP_API_KEY: KEY,
        SHOP_API_SECRET: SECRET,
        SHOP_API_TARGET: api.url,
        RELAY_PUBLIC: 'true',
        HOST: '127.0.0.1',
        PORT: String(port),
      });
      expect(inUse.code).toBe(1);
      expect(inUse.stderr).toBe(
        `shop-lookup-relay: PORT: port ${port} on 127.0.0.1 is in use: stop the other server or set another PORT\n`,
      );
      expect(inUse.stdout).toBe('');
    } finally {
      taken.close();
    }
  }, 60_000);

  it('names exactly what to npm install when one of its libraries is missing', async () => {
    const notFound = (name: string) =>
      Object.assign(
        new Error(
          `Cannot find package '${name}' imported from /app/node_modules/@shop-lookup/relay/dist/shop-lookup-relay.js`,
        ),
        { code: 'ERR_MODULE_NOT_FOUND' },
      );
    const absent = new Set(['pino', 'prom-client']);
    const load = async (name: string) => {
      if (absent.has(name)) throw notFound(name);
      return {};
    };
    expect(await loadServerPeers({ redis: false }, load)).toEqual({
      ok: false,
      message:
        'missing pino and prom-client, dependencies of @shop-lookup/relay that the relay command needs: npm install pino@^10 prom-client@^15',
    });
    absent.clear();
    absent.add('redis');
    const redis = await loadServerPeers({ redis: true }, load);
    expect(redis.ok === false && redis.message).toBe(
      'missing redis (REDIS_URL is set), dependencies of @shop-lookup/relay that the relay command needs: npm install redis@^6',
    );
  });

  it('starts the command itself in every example of the docs, never through npx or npm exec (signals would reach npm)', () => {
    const pages = [
      'README.md',
      'packages/relay/README.md',
      ...readdirSync(new URL('../../../docs', import.meta.url)).map((f) => `docs/${f}`),
    ];
    const through = /\b(?:npx|npm exec)\s+(?:--\S+\s+)*(?:shop-lookup-relay|@shop-lookup\/relay)\b(?!\s+help)/;
    const code = (page: string): string =>
      [
        ...readFileSync(new URL(`../../../${page}`, import.meta.url), 'utf8').matchAll(
          /^\s*```[^\n]*\n([\s\S]*?)^\s*```/gm,
        ),
      ]
        .map((m) => m[1]!)
        .join('\n');
    for (const page of pages) for (const line of code(page).split('\n')) expect(line, page).not.toMatch(through);
    // the pages that start it: the installed command itself
    for (const page of ['README.md', 'packages/relay/README.md', 'docs/relay.md', 'docs/hub.md']) {
      expect(code(page), page).toMatch(/^[^#\n]*node_modules\/\.bin\/shop-lookup-relay/m);
    }
  });

  it("guards the operators' routes with OPS_TOKEN in docs/relay.md's instances reachable from elsewhere", () => {
    const docs = readFileSync(new URL('../../../docs/relay.md', import.meta.url), 'utf8');
    const deploy = docs.slice(docs.indexOf('## Deploy'));
    const several = deploy.slice(
      deploy.indexOf('### Several instances on one Redis'),
      deploy.indexOf('\n### ', deploy.indexOf('### Several instances on one Redis') + 1),
    );
    // the several instances behind a balancer listen on every address: each one sets OPS_TOKEN
    const loop = /for port in[\s\S]*?done/.exec(several)?.[0] ?? '';
    expect(loop).toMatch(/TRUST_PROXY_HOPS=1/);
    expect(loop).toMatch(/OPS_TOKEN(_FILE)?=/);
    expect(deploy).toMatch(/Authorization: Bearer <OPS_TOKEN>/);
  });

  it('documents every variable in the one table of docs/relay.md', () => {
    const docs = readFileSync(new URL('../../../docs/relay.md', import.meta.url), 'utf8');
    const deploy = docs.slice(docs.indexOf('## Deploy'));
    for (const name of Object.keys(RELAY_VARIABLES)) expect(deploy).toMatch(new RegExp(`^\\| \`${name}\``, 'm'));
  });

  it("shows in docs/relay.md the env table the command's own list makes: every name, default and what it is", () => {
    const docs = readFileSync(new URL('../../../docs/relay.md', import.meta.url), 'utf8');
    // (`npm run docs:relay-env` writes it again from relayVariables.ts and the relay's defaults.ts)
    expect(writtenEnvTable(docs), 'docs/relay.md differs from relayVariables.ts: run npm run docs:relay-env').toBe(
      relayEnvTable(),
    );
  });

  it('says what each variable is in one sentence (the edge cases go in the notes under the table)', () => {
    const long = Object.entries(RELAY_VARIABLES as Record<string, RelayVariable>).filter(
      ([, v]) => /[.!?]\s+[A-Z`]/.test(v.what) || v.what.length > 200,
    );
    expect(long.map(([name]) => name)).toEqual([]);
  });
});

describe('relay command: till tokens', () => {
  it('reads a token file of `name token` lines and refuses a malformed one with its line number', () => {
    expect(parseTokenFile(`# comment\nfront-1 ${STATIC_TOKEN}\n\nback-2   ${STATIC_TOKEN}x\n`)).toEqual({
      ok: true,
      entries: [
        { name: 'front-1', token: STATIC_TOKEN },
        { name: 'back-2', token: `${STATIC_TOKEN}x` },
      ],
    });
    expect(parseTokenFile('front-1 short')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^line 1: expected `name token`/),
    });
    expect(parseTokenFile(`a ${STATIC_TOKEN}\na ${STATIC_TOKEN}y`)).toEqual({
      ok: false,
      message: 'line 2: the name a is listed twice',
    });
  });

  it('accepts a signed token of this shop until it expires; refuses a forged, tampered, foreign or unsigned one', () => {
    let now = Date.now();
    const tokens = createTillTokens({
      entries: [{ name: 'front-1', token: STATIC_TOKEN }],
      secret: TOKEN_SECRET,
      shop: SHOP,
      now: () => now,
    });
    const good = signTillToken({ secret: TOKEN_SECRET, shop: SHOP, till: 'front-2', expiresAt: now + 60_000 });
    expect(tokens.check(good)).toEqual({ ok: true, till: 'front-2' });
    expect(tokens.check(STATIC_TOKEN)).toEqual({ ok: true, till: 'front-1' });
    expect(tokens.check(undefined)).toEqual({ ok: false, reason: 'no_token', till: null });
    expect(tokens.check('nope-nope-nope-nope')).toEqual({ ok: false, reason: 'unknown_token', till: null });
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Json;
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, till: 'manager' })).toString('base64url')}.${signature}`;
    expect(tokens.check(tampered)).toEqual({ ok: false, reason: 'bad_signature', till: 'manager' });
    expect(
      tokens.check(
        signTillToken({
          secret: 'another-secret-of-at-least-32-chars!',
          shop: SHOP,
          till: 'x',
          expiresAt: now + 60_000,
        }),
      ),
    ).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(
      tokens.check(signTillToken({ secret: TOKEN_SECRET, shop: 'other-shop', till: 'x', expiresAt: now + 60_000 })),
    ).toMatchObject({ ok: false, reason: 'wrong_shop' });
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    expect(tokens.check(none)).toMatchObject({ ok: false, reason: 'unknown_token' });
    now += 61_000;
    expect(tokens.check(good)).toEqual({ ok: false, reason: 'expired', till: 'front-2' });
  });

  it('prints a new till token with `shop-lookup-relay token`, one the relay of that shop accepts', async () => {
    const run = await runRelayBin(['token', '--till', 'front-9', '--days', '30'], {
      TILL_TOKEN_SECRET: TOKEN_SECRET,
      SHOP_ID: SHOP,
    });
    expect(run.code).toBe(0);
    const token = run.stdout.trim();
    tokensSeen.add(token);
    expect(run.stderr).toMatch(/^till front-9 of shop cmd-shop, valid until \d{4}-/);
    expect(createTillTokens({ secret: TOKEN_SECRET, shop: SHOP }).check(token)).toEqual({ ok: true, till: 'front-9' });
    const bad = await runRelayBin(['token', '--till', 'front 9'], { TILL_TOKEN_SECRET: TOKEN_SECRET, SHOP_ID: SHOP });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);

  it('`token --days` takes a whole number from 1 to 3650, and says so when it refuses 0', async () => {
    const env = { TILL_TOKEN_SECRET: TOKEN_SECRET, SHOP_ID: SHOP };
    for (const days of ['0', '3651', '1.5']) {
      const run = await runRelayBin(['token', '--till', 'front-9', '--days', days], env);
      expect(run.code, days).toBe(2);
      expect(run.stderr).toBe(
        `shop-lookup-relay: --days: expected a whole number of days from 1 to 3650 (got "${days}")\n`,
      );
    }
    const longest = await runRelayBin(['token', '--till', 'front-9', '--days', '3650'], env);
    expect(longest.code).toBe(0);
    tokensSeen.add(longest.stdout.trim());
    expect(createTillTokens({ secret: TOKEN_SECRET, shop: SHOP }).check(longest.stdout.trim())).toEqual({
      ok: true,
      till: 'front-9',
    });
  }, 60_000);
});

describe('relay command: a token signed for another shop', () => {
  it("is refused naming the token's shop and this relay's, and how to sign one for this relay", async () => {
    const server = await startServer();
    try {
      await ready(server.origin);
      const refused = await ask(
        `${server.origin}${BASE}/relay/v1/feed?limit=1`,
        bearer(signed('front-3', 1, 'my-shop')),
      );
      expect(refused.status).toBe(401);
      expect((refused.body as Json).message).toBe(
        `UNAUTHORIZED: this till token is for shop "my-shop", and this relay serves shop "${SHOP}": sign the till's token for this relay's shop (\`shop-lookup-relay token --till NAME\` with SHOP_ID=${SHOP}, the relay's SHOP_ID).`,
      );
      expect(server.lines.filter((l) => l.msg === 'refused').map((l) => [l.reason, l.till])).toEqual([
        ['wrong_shop', 'front-3'],
      ]);
    } finally {
      await server.stop('test end');
    }
  });
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
    expect(
      (await ask(`${url}/relay/v1/feed?limit=1`, { cookie: `theme=dark; shop_lookup_till=${signed('front-3')}` }))
        .status,
    ).toBe(200);
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

  it('takes issued-coupon uses from every till with a valid token, named by its token, never from a client STOREFRONT_OPEN lets in', async () => {
    await ready(server.origin);
    const body = JSON.stringify({
      device: 'dev-cmd',
      uses: [{ entry: 'e1', code: 'IC-CMD-1', couponCode: null, orderId: 'o1', at: 1, override: false }],
    });
    const send = (headers: Record<string, string>) =>
      fetch(`${url}/relay/v1/uses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    expect((await send({})).status).toBe(401);
    const sent = await send(bearer(STATIC_TOKEN));
    expect(sent.status).toBe(200);
    expect(((await sent.json()) as Json).uses).toEqual([{ entry: 'e1', recorded: true, conflict: null }]);
    const feed = (await ask(`${url}/relay/v1/feed`, bearer(signed('front-3')))).body as Json;
    const record = (feed.upserts as Json[]).find((u) => u.resource === 'uses')!.record;
    expect(record.uses.map((u: Json) => [u.till, u.device])).toEqual([['front-1', 'dev-cmd']]);
    expect(((await ask(`${url}/relay/v1`, bearer(STATIC_TOKEN))).body as Json).routes).toContain('uses');
  });

  it("keeps a till's uses within MAX_USES_PER_TILL (429 till_uses_full), the other tills' uses still taken", async () => {
    const bounded = await startServer({ MAX_USES: '1000', MAX_USES_PER_TILL: '2', SHOP_ID: 'cmd-shop-uses-bound' });
    try {
      await ready(bounded.origin);
      const post = (token: string, device: string, entries: string[]) =>
        fetch(`${bounded.origin}${BASE}/relay/v1/uses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...bearer(token) },
          body: JSON.stringify({
            device,
            uses: entries.map((entry) => ({
              entry,
              code: `IC-BOUND-${entry}`,
              couponCode: null,
              orderId: `o-${entry}`,
              at: 1,
              override: false,
            })),
          }),
        });
      expect((await post(STATIC_TOKEN, 'dev-1', ['a1', 'a2'])).status).toBe(200);
      const past = await post(STATIC_TOKEN, 'dev-1', ['a3']);
      expect(past.status).toBe(429);
      expect(await past.json()).toMatchObject({ code: 'till_uses_full' });
      expect((await post(signed('front-2', 1, 'cmd-shop-uses-bound'), 'dev-2', ['b1'])).status).toBe(200);
    } finally {
      await bounded.stop('test end');
    }
  });

  it('answers the pages of CORS_ORIGINS across origins, and the storefront routes STOREFRONT_OPEN opens to any page', async () => {
    const cors = await startServer({
      CORS_ORIGINS: 'https://till.example',
      STOREFRONT_OPEN: 'true',
      SHOP_ID: 'cmd-shop-cors',
    });
    try {
      await ready(cors.origin);
      const feed = `${cors.origin}${BASE}/relay/v1/feed?limit=1`;
      const preflight = await ask(
        feed,
        {
          origin: 'https://till.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
        undefined,
        'OPTIONS',
      );
      expect(preflight.status).toBe(204);
      expect(preflight.headers).toMatchObject({
        'access-control-allow-origin': 'https://till.example',
        'access-control-allow-headers': expect.stringContaining('Authorization'),
      });
      const answer = await ask(feed, { origin: 'https://till.example', ...bearer(STATIC_TOKEN) });
      expect(answer.status).toBe(200);
      expect(answer.headers).toMatchObject({
        'access-control-allow-origin': 'https://till.example',
        'access-control-allow-credentials': 'true',
      });
      expect(answer.headers.vary).toMatch(/\bOrigin\b/);
      const elsewhere = await ask(feed, { origin: 'https://elsewhere.example', ...bearer(STATIC_TOKEN) });
      expect(elsewhere.headers['access-control-allow-origin']).toBeUndefined();
      const storefront = await ask(`${cors.origin}${BASE}/v2/shop/coupons/WELCOME10`, {
        origin: 'https://elsewhere.example',
      });
      expect(storefront.status).toBe(200);
      expect(storefront.headers['access-control-allow-origin']).toBe('*');
      expect(storefront.headers['access-control-allow-credentials']).toBeUndefined();
    } finally {
      await cors.stop('test end');
    }
  });

  it('logs one JSON line per request with its request id, route and status, never the URL or the code asked for', async () => {
    const given = await ask(`${url}/v2/shop/coupons/NO-SUCH-CODE-7781`, { 'x-request-id': 'lb-abc-123' });
    expect(given.headers['x-request-id']).toBe('lb-abc-123');
    const made = await ask(`${url}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN));
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((resolve) => setImmediate(resolve)); // the line is written when the answer is done
    const line = server.lines.find((l) => l.msg === 'request' && l.reqId === 'lb-abc-123');
    expect(line).toMatchObject({
      route: 'coupon',
      method: 'GET',
      status: expect.any(Number),
      shop: SHOP,
      level: 'info',
    });
    expect(server.lines.find((l) => l.reqId === made.headers['x-request-id'])).toMatchObject({
      route: 'feed',
      status: 200,
      till: 'front-1',
    });
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

  it("lets an operator list and drop the tills' uses (GET /ops/uses, POST /ops/uses/drop): OPS_TOKEN only, logged with who, counted in the metrics", async () => {
    const ops = await startServer({ OPS_TOKEN });
    try {
      await ready(ops.origin);
      const opsUrl = `${ops.origin}${BASE}`;
      const json = { 'content-type': 'application/json' };
      const posted = await fetch(`${opsUrl}/relay/v1/uses`, {
        method: 'POST',
        headers: { ...json, ...bearer(STATIC_TOKEN) },
        body: JSON.stringify({
          device: 'd1',
          uses: [{ entry: 'e1', code: 'IC-STOLEN', couponCode: null, orderId: 'A-1', at: 1, override: false }],
        }),
      });
      expect(posted.status).toBe(200);
      // a till's token opens no operators' route
      expect((await fetch(`${ops.origin}/ops/uses`, { headers: bearer(STATIC_TOKEN) })).status).toBe(403);
      const list = await fetch(`${ops.origin}/ops/uses?till=front-1`, { headers: bearer(OPS_TOKEN) });
      expect(list.status).toBe(200);
      expect(((await list.json()) as { uses: { code: string; uses: { till: string }[] }[] }).uses).toMatchObject([
        { code: 'IC-STOLEN', uses: [{ till: 'front-1', orderId: 'A-1' }] },
      ]);
      expect((await fetch(`${ops.origin}/ops/uses/drop`, { headers: bearer(OPS_TOKEN) })).status).toBe(405);
      const nothing = await fetch(`${ops.origin}/ops/uses/drop`, {
        method: 'POST',
        headers: { ...json, ...bearer(OPS_TOKEN) },
        body: '{}',
      });
      expect(nothing.status).toBe(400);
      const dropped = await fetch(`${ops.origin}/ops/uses/drop`, {
        method: 'POST',
        headers: { ...json, ...bearer(OPS_TOKEN) },
        body: JSON.stringify({ till: 'front-1' }),
      });
      expect(await dropped.json()).toEqual({ codes: 1, uses: 1 });
      expect(ops.lines.find((l) => /uses dropped by operator/.test(String(l.msg)))?.msg).toMatch(
        /uses dropped by operator 127\.0\.0\.1: 1 uses of 1 codes \(till front-1/,
      );
      const metrics = (await ask(`${ops.origin}/metrics`, bearer(OPS_TOKEN))).body as string;
      expect(metrics).toMatch(/^shop_relay_uses_total\{event="recorded"\} 1$/m);
      expect(metrics).toMatch(/^shop_relay_uses_dropped_total\{why="operator"\} 1$/m);
    } finally {
      await ops.stop('test end');
    }
  });

  it('bounds OPS_TOKEN guesses per client: past ten a minute /metrics is 429 before the token is compared', async () => {
    const ops = await startServer({ OPS_TOKEN });
    try {
      for (let guess = 0; guess < 10; guess++)
        expect((await ask(`${ops.origin}/metrics`, bearer(`guess-${guess}`))).status).toBe(403);
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
    const names = new Set(
      [...text.matchAll(/^# TYPE (shop_relay_\w+) /gm)]
        .map((m) => m[1]!)
        .filter((n) => !/^shop_relay_(process|nodejs)_/.test(n)),
    );
    const docs = readFileSync(new URL('../../../docs/relay.md', import.meta.url), 'utf8');
    const documented = new Set(
      [...docs.slice(docs.indexOf('## Deploy')).matchAll(/^\| `(shop_relay_\w+)`/gm)].map((m) => m[1]!),
    );
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

describe("relay command: the operators' routes on every address", () => {
  it('never opens /metrics or status to a forwarded 127.0.0.1 (TRUST_PROXY_HOPS=1, HOST 0.0.0.0, no OPS_TOKEN)', async () => {
    // the README's three-instance example without OPS_TOKEN, reached straight from another machine
    const env = {
      ...(baseEnv() as Record<string, string>),
      HOST: '0.0.0.0',
      TRUST_PROXY_HOPS: '1',
      SHOP_ID: 'cmd-shop-ops',
    };
    const relay = await startRelayBin(env);
    // this machine's own non-loopback address, when it has one: a connection from it is not from loopback
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    try {
      const spoof = { 'x-forwarded-for': '127.0.0.1' };
      const origins = [relay.url, ...(external ? [`http://${external}:${relay.port}`] : [])];
      for (const origin of origins) {
        expect((await ask(`${origin}/metrics`, spoof)).status, origin).toBe(403);
        expect((await ask(`${origin}${BASE}/relay/v1/status`, spoof)).status, origin).toBe(403);
      }
      if (external) expect((await ask(`http://${external}:${relay.port}/metrics`)).status).toBe(403);
      // and it said at start that it must be reachable only through the balancer
      expect(relay.logs().filter((l) => /^TRUST_PROXY_HOPS is set and HOST/.test(l.msg))).toEqual([
        expect.objectContaining({ level: 'warn', host: '0.0.0.0', trustProxyHops: 1 }),
      ]);
      // asked on this machine itself, unforwarded: answered
      expect((await ask(`${relay.url}/metrics`)).status).toBe(200);
      expect((await ask(`${relay.url}${BASE}/relay/v1/status`)).status).toBe(200);
      await expect
        .poll(() => relay.logs().filter((l) => l.msg === 'refused' && l.reason === 'ops_only').length)
        .toBe(external ? 5 : 2);
    } finally {
      await relay.kill();
    }
  }, 60_000);
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
      const polls = Array.from({ length: 100 }, (_, i) =>
        ask(poll, bearer(signed(`busy-${i}`)), stop.signal).catch(() => null),
      );
      while ((await server.relay!.status()).waiting < 100) await new Promise((resolve) => setImmediate(resolve));
      const busy = await ask(`${server.origin}${BASE}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN));
      expect(busy).toMatchObject({
        status: 503,
        headers: { 'retry-after': '5', connection: 'close' },
        body: { code: 'relay_busy' },
      });
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
      const parked = [
        ask(poll, bearer(signed('lp-1')), stop.signal).catch(() => null),
        ask(poll, bearer(signed('lp-2')), stop.signal).catch(() => null),
      ];
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

describe('relay command: connections that send nothing (issue 39, item 5)', () => {
  it('answers 408 and closes a connection that sends no request, or a byte of one, within HEADERS_TIMEOUT_MS; a parked long-poll stays', async () => {
    const server = await startServer({ HEADERS_TIMEOUT_MS: '1000' });
    try {
      await ready(server.origin);
      const feed = `${server.origin}${BASE}/relay/v1/feed`;
      const head = (await ask(`${feed}?limit=1`, bearer(STATIC_TOKEN))).body as Json;
      // a long-poll waits longer than the header timeout: its request came, so its connection stays
      const parked = ask(`${feed}?since=${head.version}&handle=${head.handle}&wait=2`, bearer(STATIC_TOKEN));
      const silent = await idleSocket(server.port);
      const oneByte = await idleSocket(server.port);
      oneByte.write('G');
      // each is answered 408, as Node answers headers that come too slowly, and closed
      const closed = (socket: Socket) =>
        new Promise<string>((resolve) => {
          let text = '';
          socket.on('data', (chunk) => (text += String(chunk)));
          socket.once('close', () => resolve(text));
        });
      for (const text of await Promise.all([closed(silent), closed(oneByte)])) expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect((await parked).status).toBe(200);
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
    expect(messages.slice(messages.indexOf('shutting down'))).toEqual(
      expect.arrayContaining(['shutting down', 'stopped']),
    );
    expect(relay.logs().find((l) => l.msg === 'shutting down')).toMatchObject({ reason: 'SIGTERM', parked: 1 });
  }, 60_000);

  it('says so when npm started it (npx, npm exec, npm start): the signals reach npm, not the relay', async () => {
    const plain = await startRelayBin({ ...(baseEnv() as Record<string, string>), SHOP_ID: 'cmd-shop-npm' });
    const npx = await startRelayBin({
      ...(baseEnv() as Record<string, string>),
      SHOP_ID: 'cmd-shop-npm',
      npm_lifecycle_event: 'npx',
      npm_command: 'exec',
    });
    try {
      expect(plain.logs().find((l) => l.msg === 'listening')).toMatchObject({ pid: plain.pid });
      await expect
        .poll(() => npx.logs().find((l) => String(l.msg).startsWith('started through npm')))
        .toMatchObject({
          level: 'warn',
          npm: 'npx',
          msg: expect.stringContaining('run node_modules/.bin/shop-lookup-relay itself'),
        });
      expect(plain.logs().filter((l) => String(l.msg).startsWith('started through npm'))).toEqual([]);
    } finally {
      await Promise.all([plain.kill(), npx.kill()]);
    }
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
      key: KEY,
      secret: SECRET,
      target: api.url,
      store,
      rateLimits: false,
      public: true,
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

describe('relay command: SIGHUP reads every <NAME>_FILE secret again', () => {
  const files = (name: string, values: Record<string, string>): Record<string, string> => {
    const env: Record<string, string> = {};
    for (const [variable, value] of Object.entries(values)) {
      const file = join(dir, `${name}-${variable.toLowerCase()}`);
      writeFileSync(file, `${value}\n`);
      env[`${variable}_FILE`] = file;
    }
    return env;
  };
  const rotated = (relay: RelayBinProcess): Json | undefined => relay.logs().find((l) => l.msg === 'secrets reloaded');

  it('rotates the key, the signing secret and OPS_TOKEN: old till tokens and the old ops token stop working, new ones work', async () => {
    const [oldSigning, newSigning] = [
      'rotated-signing-secret-old-0123456789ab',
      'rotated-signing-secret-new-0123456789ab',
    ];
    const [oldOps, newOps] = ['ops-token-rotated-old-1a2b', 'ops-token-rotated-new-3c4d'];
    const shop = 'cmd-shop-rotate';
    const sign = (secret: string, till: string): string => {
      const token = signTillToken({ secret, shop, till, expiresAt: Date.now() + 86_400_000 });
      tokensSeen.add(token);
      return token;
    };
    for (const s of [oldSigning, newSigning, oldOps, newOps]) tokensSeen.add(s);
    // started with a key the API no longer takes: nothing is listed until the new one is read
    const before = {
      SHOP_API_KEY: 'relay-cmd-key-retired-77',
      SHOP_API_SECRET: SECRET,
      TILL_TOKEN_SECRET: oldSigning,
      OPS_TOKEN: oldOps,
    };
    const env = files('rotate', before);
    const relay = await startRelayBin({
      ...env,
      SHOP_API_TARGET: api.url,
      SHOP_ID: shop,
      BASE_PATH: BASE,
      LEASE_MS: '1000',
    });
    try {
      const feed = `${relay.url}${BASE}/relay/v1/feed?limit=1`;
      const oldTill = sign(oldSigning, 'front-old');
      await expect
        .poll(() => relay.logs().some((l) => String(l.msg).startsWith('listing coupons failed')), { timeout: 20_000 })
        .toBe(true);
      expect((await ask(`${relay.url}/readyz`)).status).toBe(503);
      expect((await ask(feed, bearer(oldTill))).status).not.toBe(401);
      expect((await ask(`${relay.url}/metrics`, bearer(oldOps))).status).toBe(200);

      files('rotate', { SHOP_API_KEY: KEY, SHOP_API_SECRET: SECRET, TILL_TOKEN_SECRET: newSigning, OPS_TOKEN: newOps });
      relay.signal('SIGHUP');
      // a token signed with the old secret is refused from the reload on
      await expect.poll(async () => (await ask(feed, bearer(oldTill))).status, { timeout: 20_000 }).toBe(401);
      expect(((await ask(feed, bearer(oldTill))).body as Json).message).toMatch(/not signed by this relay/);
      // the line is written once the reload is whole (the tokens are checked anew before it)
      await expect
        .poll(() => rotated(relay), { timeout: 20_000 })
        .toMatchObject({
          level: 'info',
          changed: ['SHOP_API_KEY', 'TILL_TOKEN_SECRET', 'OPS_TOKEN'],
        });
      // the new key lists the API (the shop's id stays the one it started with)
      await expect.poll(async () => (await ask(`${relay.url}/readyz`)).status, { timeout: 20_000 }).toBe(200);
      const answer = await ask(feed, bearer(sign(newSigning, 'front-new')));
      expect(answer).toMatchObject({ status: 200, body: { shop } });
      expect((await ask(`${relay.url}/metrics`, bearer(oldOps))).status).toBe(403);
      expect((await ask(`${relay.url}/metrics`, bearer(newOps))).status).toBe(200);
      // a _FILE that does not read keeps everything as it was
      writeFileSync(env.OPS_TOKEN_FILE!, '');
      relay.signal('SIGHUP');
      await expect
        .poll(() => relay.logs().some((l) => l.msg === 'secrets not reloaded: the old ones stay'), { timeout: 20_000 })
        .toBe(true);
      expect((await ask(`${relay.url}/metrics`, bearer(newOps))).status).toBe(200);
    } finally {
      await relay.kill();
    }
  }, 90_000);

  it('moves to a new REDIS_URL: a relay on the new Redis serves, the old Redis is no longer needed', async () => {
    const [first, second] = await Promise.all([startRedisServer(), startRedisServer()]);
    try {
      const env = files('redis', { REDIS_URL: first.url });
      const relay = await startRelayBin({
        ...(baseEnv() as Record<string, string>),
        ...env,
        SHOP_ID: 'cmd-shop-redis',
        LEASE_MS: '1000',
      });
      try {
        await ready(relay.url);
        const instance = async (): Promise<string> =>
          ((await ask(`${relay.url}${BASE}/relay/v1/status`)).body as Json).instance as string;
        const before = await instance();
        files('redis', { REDIS_URL: second.url });
        relay.signal('SIGHUP');
        // a new relay (a new instance id) on the new Redis; the reload says so once the old relay has closed, which
        // may be after the new one answers
        await expect.poll(instance, { timeout: 20_000 }).not.toBe(before);
        await expect.poll(() => rotated(relay), { timeout: 20_000 }).toMatchObject({ changed: ['REDIS_URL'] });
        await first.stop();
        await expect.poll(async () => (await ask(`${relay.url}/readyz`)).status, { timeout: 20_000 }).toBe(200);
        const metrics = (await ask(`${relay.url}/metrics`)).body as string;
        expect(metrics).toMatch(/^shop_relay_store_up 1$/m);
        expect((await ask(`${relay.url}${BASE}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN))).status).toBe(200);
        expect(relay.logs().filter((l) => l.msg === 'store unreachable')).toEqual([]);
      } finally {
        await relay.kill();
      }
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  }, 90_000);
});

describe('relay command: log volume', () => {
  it('writes no line at info for a health probe, and at most LOG_CLIENT_LINES_PER_MINUTE lines of one client, saying how many it dropped', async () => {
    const server = await startServer({ LOG_CLIENT_LINES_PER_MINUTE: '10', STOREFRONT_OPEN: 'true' });
    try {
      await ready(server.origin);
      for (let i = 0; i < 5; i++) {
        expect((await ask(`${server.origin}/healthz`)).status).toBe(200);
        expect((await ask(`${server.origin}/readyz`)).status).toBe(200);
      }
      // one till: 30 requests; anonymous clients of one /24 (refused: a line `refused` and a line `request` each;
      // nine: a tenth would put the network past its refusal bound, and the tills' requests from it too)
      for (let i = 0; i < 30; i++)
        expect((await ask(`${server.origin}${BASE}/relay/v1/feed?limit=1`, bearer(STATIC_TOKEN))).status).toBe(200);
      for (let i = 0; i < 9; i++) expect((await ask(`${server.origin}${BASE}/relay/v1/feed?limit=1`)).status).toBe(401);
      // another till still has its own budget
      expect((await ask(`${server.origin}${BASE}/relay/v1/feed?limit=1`, bearer(signed('front-7')))).status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve)); // the last line is written when its answer is done
      const requests = server.lines.filter((l) => l.msg === 'request');
      expect(requests.filter((l) => l.route === 'healthz' || l.route === 'readyz')).toEqual([]);
      expect(requests.filter((l) => l.till === 'front-1')).toHaveLength(10);
      expect(requests.filter((l) => l.till === 'front-7')).toHaveLength(1);
      const anonymous = server.lines.filter((l) => (l.msg === 'request' && l.status === 401) || l.msg === 'refused');
      expect(anonymous).toHaveLength(10);
    } finally {
      await server.stop('test end');
    }
    const dropped = server.lines.filter((l) => l.msg === 'log lines dropped');
    expect(dropped.map((l) => [l.client, l.dropped, l.level])).toEqual(
      expect.arrayContaining([
        ['till:front-1', 20, 'warn'],
        ['net:127.0.0.0/24', 8, 'warn'],
      ]),
    );
    expect(dropped).toHaveLength(2);
  });
});

describe('relay command: pages of origins not in CORS_ORIGINS', () => {
  const TILL_PAGE = 'https://till.example';
  const OTHER_PAGE = 'https://other.example';
  const unlisted = (lines: Json[]) =>
    lines.filter((l) => l.level === 'warn' && /^origin not in CORS_ORIGINS/.test(String(l.msg)));

  it("warns of each request and preflight from a page whose origin is not listed, naming it, within its client's log budget", async () => {
    const server = await startServer({ CORS_ORIGINS: TILL_PAGE, LOG_CLIENT_LINES_PER_MINUTE: '10' });
    try {
      await ready(server.origin);
      const feed = `${server.origin}${BASE}/relay/v1/feed?limit=1`;
      const preflight = await ask(
        feed,
        {
          origin: OTHER_PAGE,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
        undefined,
        'OPTIONS',
      );
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
      expect(unlisted(server.lines)).toEqual([
        expect.objectContaining({ origin: OTHER_PAGE, corsOrigins: TILL_PAGE, client: '127.0.0.1' }),
      ]);
      // a listed page, a page of the relay's own origin and a request with no Origin are no warning
      expect((await ask(feed, { ...bearer(STATIC_TOKEN), origin: TILL_PAGE })).status).toBe(200);
      expect((await ask(feed, { ...bearer(STATIC_TOKEN), origin: server.origin })).status).toBe(200);
      expect((await ask(feed, bearer(STATIC_TOKEN))).status).toBe(200);
      expect(unlisted(server.lines)).toHaveLength(1);
      // the unlisted page's requests: one warning each, until its client's budget of lines for the minute is spent
      for (let i = 0; i < 20; i++)
        expect((await ask(feed, { ...bearer(STATIC_TOKEN), origin: OTHER_PAGE })).status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));
      const warned = unlisted(server.lines);
      expect(warned.length).toBeGreaterThan(1);
      expect(warned.length).toBeLessThanOrEqual(10);
      expect(warned.every((l) => l.origin === OTHER_PAGE)).toBe(true);
    } finally {
      await server.stop('test end');
    }
    expect(server.lines.filter((l) => l.msg === 'log lines dropped').map((l) => l.client)).toContain('till:front-1');
  });

  it('warns without any CORS_ORIGINS set too (a page on another origin than a relay that lists none)', async () => {
    const server = await startServer();
    try {
      await ready(server.origin);
      await ask(
        `${server.origin}${BASE}/relay/v1`,
        { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' },
        undefined,
        'OPTIONS',
      );
      await new Promise((resolve) => setImmediate(resolve));
      expect(unlisted(server.lines)).toEqual([
        expect.objectContaining({ origin: 'http://localhost:5173', corsOrigins: '(none)' }),
      ]);
    } finally {
      await server.stop('test end');
    }
  });
});

describe('relay command: logs', () => {
  it('names the upstream origin it failed to reach, and why, in the line of a failed listing', async () => {
    // a port nothing listens on any more: every connection is refused
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const down = await startServer({ SHOP_API_TARGET: `http://127.0.0.1:${port}/api`, SHOP_ID: 'cmd-shop-down' });
    try {
      await vi.waitFor(() => expect(down.lines.some((l) => /^listing coupons failed/.test(String(l.msg)))).toBe(true), {
        timeout: 15_000,
      });
      const line = down.lines.find((l) => /^listing coupons failed/.test(String(l.msg)))!;
      expect(line).toMatchObject({
        level: 'warn',
        msg: `listing coupons failed: network_error: the shop API could not be reached; it is listed again later (the shop API at http://127.0.0.1:${port}: ECONNREFUSED)`,
      });
    } finally {
      await down.stop('test end');
    }
  });

  it('never wrote the key, the secret, the signing secret, the ops token, a till token or the upstream token', () => {
    const lines = [...inProcessLines, ...everyRelayLine];
    expect(lines.length).toBeGreaterThan(50);
    expect(upstreamTokens.size).toBeGreaterThan(0);
    const secrets = [KEY, SECRET, TOKEN_SECRET, OPS_TOKEN, ...tokensSeen, ...upstreamTokens];
    const leaks = lines.filter((line) => secrets.some((s) => line.includes(s)));
    expect(leaks).toEqual([]);
  });
});
