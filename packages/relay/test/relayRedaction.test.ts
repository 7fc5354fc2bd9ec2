// One redaction for the relay and the proxy (issue 25, item 9): an upstream (or a gateway in front of it) that echoes
// everything it ever received, the /v2/auth body with the key and the secret included, plain and JSON-escaped, into
// its error messages, its records and its headers. No answer of either server and no line either writes to its log
// holds the key, the secret, a token or a password, in any form; errors are our code and fixed words.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createShopApiProxy } from '../src';
import { createShopRelay } from '../src';
import { scrubLine } from '../src/server/relayLogger';
import { listen } from '@shop-lookup/test-kit/relayUtils';

// a secret whose JSON escaping differs from itself (quote, backslash, slash, non-ASCII)
const KEY = 'echo-key-7f3a9c2e1d';
const SECRET = 'echo-secret/"q"\\é-42x';
const PASSWORD = 'gw-pass-58e1c0d9';
const USER = 'gateway-operator';

/**
 * The middle of the secret's base64 inside any longer base64 text, at each of the three byte offsets (both
 * alphabets).
 */
function base64Cores(secret: string): string[] {
  return [0, 1, 2].flatMap((offset) => {
    const bytes = Buffer.concat([Buffer.alloc(offset), Buffer.from(secret)]);
    // the groups holding the filler or whatever follows the secret are left out
    return [bytes.toString('base64'), bytes.toString('base64url')].map((b) =>
      b.slice(offset ? 4 : 0, Math.floor(bytes.length / 3) * 4),
    );
  });
}

/**
 * Every form in which a secret could be written: as is, JSON-escaped, \u-escaped (either case), percent-encoded, in
 * base64 (a Basic authorization of key:secret); the checks compare in any letter case (an upper-cased echo).
 */
function formsOf(secret: string): string[] {
  const unicode = [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    unicode,
    unicode.toUpperCase().replaceAll('\\U', '\\u'),
    encodeURIComponent(secret),
    ...base64Cores(secret),
  ];
}

/** An upstream that speaks the API's envelope but echoes everything it ever received into what it answers. */
async function startEchoUpstream() {
  const received: string[] = [];
  const tokens: string[] = [];
  let listing: 'records' | 'error' = 'records';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)} ${body}`);
      const everything = received.join('\n');
      // the echo as is, JSON-escaped once more, and \u-escaped in the raw bytes
      const plain = JSON.stringify(everything);
      const twice = JSON.stringify(JSON.stringify(everything));
      const unicode = `"${[...everything].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
      // and upper-cased, and in base64 (as a gateway's Basic authorization of key:secret would be)
      const basic = Buffer.from(`${KEY}:${SECRET}`).toString('base64');
      const echo = `"msg":${plain},"debug":${twice},"trace":${unicode},"upper":${JSON.stringify(everything.toUpperCase())},"b64":"${Buffer.from(everything).toString('base64')}","auth":"Basic ${basic}"`;
      const send = (status: number, raw: string, headers: Record<string, string> = {}) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'x-echo': encodeURIComponent(everything).slice(0, 4000),
          ...headers,
        });
        res.end(raw);
      };
      const path = (req.url ?? '').split('?')[0]!;
      const lastToken = tokens.at(-1) ?? 'none';
      if (path === '/v2/auth') {
        const token = `echo-token-${tokens.length}-${Math.random().toString(36).slice(2, 12)}`;
        tokens.push(token);
        return send(200, `{"code":200,${echo},"access_token":"${token}","data":{"access_token":"${token}"}}`);
      }
      if (path === '/v2/shop/coupons') {
        if (listing === 'error') return send(500, `{"code":-19,${echo},"data":null}`, { 'retry-after': lastToken });
        const record = `{"coupon_code":"ECHO1","status":"progress","name":${plain},"apply_sale_price":0,"apply_sale_percent":5,"memo":${unicode}}`;
        return send(
          200,
          `{"code":200,${echo},"data":{"list":[${record}],"pagenation":{"data_count":"1","current_page":1,"total_page":1,"pagesize":100}}}`,
        );
      }
      const code = decodeURIComponent(path.split('/').at(-1) ?? '');
      switch (code) {
        case 'ECHO-OK':
          return send(
            200,
            `{"code":200,${echo},"data":{"coupon_code":"ECHO-OK","name":${plain},"note":${unicode},${plain}:1}}`,
          );
        case 'ECHO-BAD':
          return send(400, `{"code":-10,${echo},"data":{"request":${plain}}}`);
        case 'ECHO-THROTTLED':
          return send(429, `{"code":-7,${echo},"data":null}`, { 'retry-after': lastToken });
        case 'ECHO-200-ERROR':
          return send(200, `{"code":-7,${echo},"data":null}`);
        case 'ECHO-NO-CODE':
          return send(200, `{${echo},"data":${plain}}`);
        case 'ECHO-TOKEN':
          return send(401, `{"code":-2,${echo},"data":null}`);
        case 'ECHO-DUPLICATE':
          return send(200, `{"code":200,"msg":${plain},"msg":"SUCCESS","data":{"coupon_code":"ECHO-DUPLICATE"}}`);
        default:
          res.writeHead(502, { 'content-type': 'text/html' });
          return res.end(`<html><body><pre>${everything}</pre></body></html>`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    tokens,
    received,
    failListings: () => void (listing = 'error'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every string (keys too) of the JSON body in `text` (headers, a blank line, then the body), decoded. */
function stringsIn(text: string): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(k), walk(x);
  };
  try {
    walk(JSON.parse(text.slice(text.indexOf('\n{') + 1)));
  } catch {
    // not JSON: its raw forms are checked
  }
  return out;
}

const ITEMS = [
  'ECHO-OK',
  'ECHO-BAD',
  'ECHO-THROTTLED',
  'ECHO-200-ERROR',
  'ECHO-NO-CODE',
  'ECHO-TOKEN',
  'ECHO-DUPLICATE',
  'ECHO-HTML',
];

describe('one redaction for the relay and the proxy', () => {
  let upstream: Awaited<ReturnType<typeof startEchoUpstream>>;
  const logged: string[] = [];
  const seen: { where: string; text: string }[] = [];
  const closers: (() => Promise<void> | void)[] = [];

  beforeEach(async () => {
    upstream = await startEchoUpstream();
    logged.length = 0;
    seen.length = 0;
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(
          args
            .map((a) => (a instanceof Error ? `${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a)))
            .join(' '),
        );
      });
    }
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await upstream.close();
    vi.restoreAllMocks();
  });

  async function serve(
    handler: Parameters<typeof listen>[0],
  ): Promise<(path: string) => Promise<{ status: number; text: string; body: any }>> {
    const { server, origin } = await listen(handler);
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return async (path) => {
      const res = await fetch(`${origin}${path}`);
      const text = `${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${await res.text()}`;
      seen.push({ where: path, text });
      let body: any;
      try {
        body = JSON.parse(text.slice(text.indexOf('\n{') + 1));
      } catch {
        body = undefined;
      }
      return { status: res.status, text, body };
    };
  }

  /** Nothing anybody saw or any log line holds a secret, in any form (the JSON answers also once decoded). */
  function expectNothingLeaked({ reached = true } = {}): void {
    const secrets = [KEY, SECRET, PASSWORD, USER, ...upstream.tokens];
    if (reached) {
      // the upstream did receive them, and echoed them: the test is not vacuous
      expect(upstream.tokens.length).toBeGreaterThan(0);
      expect(upstream.received.join('\n')).toContain(JSON.stringify(SECRET).slice(1, -1));
    }
    for (const { where, text } of [...seen, ...logged.map((text) => ({ where: 'log', text }))]) {
      const strings = stringsIn(text);
      for (const secret of secrets) {
        for (const form of formsOf(secret)) {
          expect(text.toLowerCase().includes(form.toLowerCase()), `${where} holds ${form}: ${text.slice(0, 300)}`).toBe(
            false,
          );
        }
        // once decoded, in every form too: a decoded string may carry the secret JSON-escaped (an echoed JSON body)
        for (const form of formsOf(secret)) {
          expect(
            strings.some((s) => s.toLowerCase().includes(form.toLowerCase())),
            `${where}, once decoded, holds ${form}`,
          ).toBe(false);
        }
      }
    }
  }

  it('the proxy answers every echoing answer with our code and words, and its successful data redacted', async () => {
    const proxy = createShopApiProxy({
      key: KEY,
      secret: SECRET,
      target: upstream.url,
      public: true,
      rateLimits: false,
    });
    closers.push(() => proxy.close());
    const get = await serve((req, res) => proxy(req, res));
    const answers: Record<string, Awaited<ReturnType<typeof get>>> = {};
    for (const code of ITEMS) answers[code] = await get(`/v2/shop/coupons/${code}`);
    expect(answers['ECHO-OK']).toMatchObject({ status: 200, body: { code: 200, data: { coupon_code: 'ECHO-OK' } } });
    expect(answers['ECHO-BAD']).toMatchObject({
      status: 400,
      body: { code: -10, msg: expect.stringMatching(/^INVALID PARAMETER: /), data: null },
    });
    expect(answers['ECHO-THROTTLED']).toMatchObject({ status: 429, body: { code: -7, data: null } });
    expect(answers['ECHO-200-ERROR']).toMatchObject({ status: 200, body: { code: -7, data: null } });
    expect(answers['ECHO-NO-CODE']).toMatchObject({ status: 502, body: { code: -19 } });
    expect(answers['ECHO-TOKEN']).toMatchObject({ status: 401, body: { code: -2, data: null } });
    expect(answers['ECHO-DUPLICATE']).toMatchObject({
      status: 200,
      body: { msg: 'SUCCESS', data: { coupon_code: 'ECHO-DUPLICATE' } },
    });
    expect(answers['ECHO-HTML']).toMatchObject({ status: 502, body: { code: -19 } });
    // a token renewed after -2 is redacted too
    expect(upstream.tokens.length).toBeGreaterThanOrEqual(2);
    expectNothingLeaked();
  });

  it("the proxy's 502 does not repeat the user and password of its target URL, nor does its log", async () => {
    const target = `http://${USER}:${PASSWORD}@127.0.0.1:${upstream.port}`;
    const proxy = createShopApiProxy({ key: KEY, secret: SECRET, target, public: true, rateLimits: false });
    closers.push(() => proxy.close());
    const get = await serve((req, res) => proxy(req, res));
    const answer = await get('/v2/shop/coupons/ECHO-OK');
    expect(answer).toMatchObject({
      status: 502,
      body: { code: -19, msg: expect.stringContaining(`http://127.0.0.1:${upstream.port}`) },
    });
    expect(upstream.received).toEqual([]); // fetch refuses a URL with credentials: nothing went out
    expect(logged.join('\n')).not.toContain(PASSWORD);
    expectNothingLeaked({ reached: false });
  });

  it('the relay serves, lists and reports an echoing upstream without a secret in its feed, status, answers or log', async () => {
    const relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: `http://127.0.0.1:${upstream.port}`,
      public: true,
      rateLimits: false,
      retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    });
    closers.push(() => relay.close());
    const get = await serve((req, res) => relay(req, res));
    await relay.ready;
    await relay.refresh();
    const feed = await get('/relay/v1/feed');
    expect(feed.body.upserts.map((u: any) => u.key)).toEqual(['ECHO1']);
    expect(feed.body.upserts[0].record.name).toContain('[redacted]');
    for (const code of ITEMS) await get(`/v2/shop/coupons/${code}`);
    expect((await get('/v2/shop/coupons')).body.data.list[0].coupon_code).toBe('ECHO1');
    // a listing that fails with an echoing error: status, feed and log say so in our words
    upstream.failListings();
    await relay.refresh();
    const status = await get('/relay/v1/status');
    expect(status.body).toMatchObject({
      degraded: true,
      error:
        'coupons: server_error: the shop API had an internal error; it is listed again later (API code -19, HTTP 500)',
    });
    expect((await get('/relay/v1/feed')).body.relay).toMatchObject({ degraded: true });
    expect(logged.some((line) => line.includes('listing coupons failed: server_error'))).toBe(true);
    expectNothingLeaked();
  });

  it("the relay command's log scrubs the secrets in base64 and in any letter case too", () => {
    const token = 'till-token-3f9c0d7e1a2b';
    const basic = Buffer.from(`${KEY}:${SECRET}`).toString('base64');
    const line = JSON.stringify({
      msg: 'upstream said',
      auth: `Basic ${basic}`,
      seen: token.toUpperCase(),
      b64url: Buffer.from(`x${token}`).toString('base64url'),
    });
    const scrubbed = scrubLine(line, [KEY, SECRET, token]);
    for (const secret of [KEY, SECRET, token]) {
      for (const form of formsOf(secret)) expect(scrubbed.toLowerCase(), form).not.toContain(form.toLowerCase());
    }
    expect(JSON.parse(scrubbed)).toMatchObject({
      msg: 'upstream said',
      auth: expect.stringContaining('[redacted]'),
      seen: '[redacted]',
    });
  });
});
