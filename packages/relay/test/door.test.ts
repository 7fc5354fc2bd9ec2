// The door (packages/relay/src/door/createDoor.ts), written once for both modes: the relay and the credential proxy
// refuse the same requests on the six API paths the same way (the URL's length, the path, the method), before
// authorize is asked and before anything reaches the shop API; only the relay's words name its own routes too.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createShopApiProxy, createShopRelay } from '../src';
import { KEY, SECRET, startMock } from '@shop-lookup/test-kit/startMock';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A request whose path is sent exactly as written; its status and JSON body. */
function ask(origin: string, path: string, method = 'GET'): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/`, { path, method, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end();
  });
}

const REFUSED: [string, string, number, number, RegExp][] = [
  [
    'a URL past maxUrlLength',
    `/shop-api/v2/shop/coupons/${'A'.repeat(300)}`,
    414,
    -10,
    /^URI TOO LONG: request URLs are limited to 256 characters$/,
  ],
  ['a dot segment', '/shop-api/v2/shop/coupons/%2e%2e', 400, -10, /^INVALID PATH: dot segments/],
  [
    'a path it does not serve',
    '/shop-api/v2/member/members',
    404,
    -98,
    /^NO SUCH SERVICE: this proxy only serves GET \/v2\/shop\/coupons/,
  ],
  ['/v2/auth', '/shop-api/v2/auth', 404, -98, /^NO SUCH SERVICE: /],
  ['outside its mount', '/elsewhere', 404, -98, /^NO SUCH SERVICE: this path is not served here$/],
];

describe('the door', () => {
  it('refuses the same requests the same way in the relay and in the proxy, asking neither authorize nor the API', async () => {
    const mock = await startMock();
    cleanups.push(() => mock.close());
    let asked = 0;
    const authorize = () => (asked++, true);
    const common = {
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      rateLimits: false as const,
      maxUrlLength: 256,
      authorize,
    };
    const proxy = createShopApiProxy(common);
    const relay = createShopRelay({ ...common, store: createMemoryStore() });
    cleanups.push(
      () => proxy.close(),
      () => relay.close(),
    );
    await relay.ready;
    const before = mock.requests.length;
    const origins = { proxy: await serve((q, s) => proxy(q, s)), relay: await serve((q, s) => relay(q, s)) };
    for (const [what, path, status, code, words] of REFUSED) {
      for (const [mode, origin] of Object.entries(origins)) {
        const answer = await ask(origin, path);
        expect(answer.status, `${mode}: ${what}`).toBe(status);
        expect(answer.body, `${mode}: ${what}`).toMatchObject({ code, msg: expect.stringMatching(words), data: null });
      }
    }
    for (const [mode, origin] of Object.entries(origins)) {
      const post = await ask(origin, '/shop-api/v2/shop/coupons', 'POST');
      expect(post.status, mode).toBe(405);
      expect(post.body, mode).toMatchObject({
        code: -99,
        msg: expect.stringMatching(/^NO SUCH METHOD: POST is not allowed; /),
      });
    }
    // the relay adds its own routes to what it serves; the proxy has none
    expect((await ask(origins.relay, '/shop-api/v2/member/members')).body.msg).toMatch(
      /; and GET relay\/v1, relay\/v1\/feed/,
    );
    expect((await ask(origins.proxy, '/shop-api/relay/v1/feed')).status).toBe(404);
    expect(asked).toBe(0);
    // the relay lists the API by itself meanwhile; none of the refused requests reached it
    const reached = mock.requests
      .slice(before)
      .filter(
        (r) =>
          (r.method !== 'GET' && r.path !== '/v2/auth') ||
          /member|AAAA|%2e|\.\./.test(r.path) ||
          (r.path === '/v2/auth' && r.method === 'GET'),
      );
    expect(reached).toEqual([]);
  });
});
