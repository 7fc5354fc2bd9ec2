// The engine asks for compressed answers where it may: in Node (worker: false) it names br and gzip itself (Node's
// fetch alone asks for gzip only over plain HTTP), against a relay and a proxy that compress, and takes what comes;
// in a browser, where Accept-Encoding is the browser's and a page may not set it, it adds nothing.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import { createShopApiProxy, createShopRelay } from '@shop-lookup/relay';
import { acceptEncodingSettable, askCompressed } from '@shop-lookup/shop-api';
import type { ShopLookup } from '../src';
import { confirmed, lookupFor, startMock } from './utils';

/** What a server was asked (Accept-Encoding) and answered (Content-Encoding), per path. */
interface Seen {
  path: string;
  asked: string | undefined;
  coding: string | undefined;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, close: () => Promise<void>) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    // (headers given to writeHead are not readable with getHeader afterwards)
    const writeHead = res.writeHead.bind(res) as (status: number, headers: Record<string, string>) => ServerResponse;
    res.writeHead = ((status: number, headers: Record<string, string>) => {
      seen.push({
        path: (req.url ?? '').split('?')[0]!,
        asked: req.headers['accept-encoding'],
        coding: headers['content-encoding'],
      });
      return writeHead(status, headers);
    }) as typeof res.writeHead;
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push({
    async close() {
      await close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  });
  return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function mock(coupons: number): Promise<MockShopApi> {
  const api = await startMock({ data: { coupons } });
  open.push(api);
  return api;
}

function till(url: string, options: Parameters<typeof lookupFor>[1] = {}): ShopLookup {
  const t = lookupFor({ url }, options);
  open.push({ close: () => t.close() });
  return t;
}

describe('the engine asks for compressed answers', () => {
  it('in Node, takes a relay snapshot brotli-coded and stores every coupon', async () => {
    const api = await mock(2_500);
    const relay = createShopRelay({
      key: 'demo-key',
      secret: 'demo-secret',
      target: api.url,
      public: true,
      rateLimits: false,
      refreshIntervalMs: 3_600_000,
    });
    await relay.refresh();
    const { seen, url } = await serve(
      (req, res) => relay(req, res),
      () => relay.close(),
    );
    const t = till(url, { auth: undefined });
    const report = await t.sync();
    expect(report).toMatchObject({ ok: true, written: 2_500 });
    expect((await confirmed(t.coupons())).data).toHaveLength(2_500);
    const feed = seen.filter((s) => s.path === '/relay/v1/feed');
    expect(feed.length).toBeGreaterThan(0);
    expect(feed.every((s) => s.asked === 'br, gzip')).toBe(true);
    // the snapshot (2,500 coupons in one chunk) came brotli-coded
    expect(feed[0]!.coding).toBe('br');
  });

  it('in Node, lists through a proxy that compresses, page by page', async () => {
    const api = await mock(250);
    const proxy = createShopApiProxy({
      key: 'demo-key',
      secret: 'demo-secret',
      target: api.url,
      rateLimits: false,
      public: true,
    });
    const { seen, url } = await serve(
      (req, res) => proxy(req, res),
      async () => proxy.close(),
    );
    const t = till(url, { auth: undefined, source: 'direct' });
    expect(await t.sync()).toMatchObject({ ok: true, written: 250 });
    const pages = seen.filter((s) => s.path === '/v2/shop/coupons');
    expect(pages).toHaveLength(3);
    expect(pages.every((s) => s.asked === 'br, gzip' && s.coding === 'br')).toBe(true);
  });

  it('leaves Accept-Encoding to a browser (a Request there drops it) and to a caller that named one', () => {
    expect(acceptEncodingSettable()).toBe(true); // Node
    class BrowserRequest extends Request {
      constructor(input: RequestInfo | URL, init?: RequestInit) {
        const headers = new Headers(init?.headers);
        headers.delete('accept-encoding'); // a forbidden request header in browsers
        super(input, { ...init, headers });
      }
    }
    expect(acceptEncodingSettable(BrowserRequest)).toBe(false);
    const init = { headers: { accept: 'application/json' } };
    expect(askCompressed(init, false)).toBe(init);
    expect(new Headers(askCompressed(init, true)!.headers).get('accept-encoding')).toBe('br, gzip');
    expect(new Headers(askCompressed(init, true)!.headers).get('accept')).toBe('application/json');
    const own = { headers: { 'accept-encoding': 'identity' } };
    expect(askCompressed(own, true)).toBe(own);
  });
});
