// Compressed answers of the relay and the proxy: the coding the client's Accept-Encoding asks for (q-values), the
// bytes on the wire with and without it, a snapshot chunk compressed once per version for any number of tills and
// kept in the store for the other instances (memory and Redis), and ETags that still give 304 across codings.
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startMockShopApi } from '@shop-lookup/mock-server';
import { createMemoryStore, createShopApiProxy, createShopRelay, type ShopRelay } from '../src';
import { chooseEncoding } from '../src/door/acceptEncoding';
import { createRedisStore } from '../src/store/redis/redisStore';
import type { RelayStore } from '../src/store/relayStore';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';
import { KEY, listen, SECRET } from '@shop-lookup/test-kit/relayUtils';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
let redis: RedisServer | undefined;
afterAll(async () => {
  await redis?.stop();
});

interface Wire {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as they crossed the wire (not decoded). */
  bytes: Buffer;
  /** The body decoded from its content-coding. */
  text: string;
}

/** A GET with node:http, which decodes nothing: the body as sent. */
function wireGet(url: string, headers: Record<string, string> = {}): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(parts);
        const coding = res.headers['content-encoding'];
        const decoded = coding === 'br' ? brotliDecompressSync(bytes) : coding === 'gzip' ? gunzipSync(bytes) : bytes;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, text: decoded.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Serves `handler` on loopback until the test ends (then `close`, then the server); its origin. */
async function serving(handler: Parameters<typeof listen>[0], close: () => unknown): Promise<string> {
  const { server, origin } = await listen(handler);
  open.push({
    async close() {
      await close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return origin;
}

const serve = (relay: ShopRelay): Promise<string> =>
  serving(
    (req, res) => relay(req, res),
    () => relay.close(),
  );

async function mockApi(coupons: number) {
  const api = await startMockShopApi({ rateLimits: false, data: { coupons } });
  open.push(api);
  return api;
}

const relayOptions = (target: string, store?: RelayStore) => ({
  key: KEY,
  secret: SECRET,
  target,
  public: true,
  rateLimits: false as const,
  clientLimits: false as const,
  refreshIntervalMs: 3_600_000,
  ...(store ? { store } : {}),
});

describe('chooseEncoding (Accept-Encoding, RFC 9110 §12.5.3)', () => {
  it('takes br or gzip as weighed, identity when neither is acceptable or nothing is asked', () => {
    expect(chooseEncoding(undefined)).toBeNull();
    expect(chooseEncoding('')).toBeNull();
    expect(chooseEncoding('identity')).toBeNull();
    expect(chooseEncoding('deflate')).toBeNull();
    expect(chooseEncoding('gzip, deflate')).toBe('gzip'); // Node's fetch over http
    expect(chooseEncoding('gzip, deflate, br, zstd')).toBe('br'); // a browser: equal weights, the smaller
    expect(chooseEncoding('br;q=0.5, gzip;q=0.8')).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip')).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0')).toBeNull();
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('br;q=0, *;q=0.5')).toBe('gzip');
    expect(chooseEncoding('*;q=0')).toBeNull();
    expect(chooseEncoding('x-gzip')).toBe('gzip');
    expect(chooseEncoding('GZIP ; Q=0.3, identity;q=0.9')).toBeNull();
    expect(chooseEncoding('br;q=1.0, gzip;q=1.0, identity;q=0.5')).toBe('br');
  });
});

describe('compressed answers of the relay', () => {
  it('sends a snapshot chunk brotli- or gzip-coded as asked, as it is without Accept-Encoding, Vary: Accept-Encoding', async () => {
    const api = await mockApi(2_000);
    const relay = createShopRelay(relayOptions(api.url));
    const origin = await serve(relay);
    await relay.refresh();
    const url = `${origin}/relay/v1/feed?limit=5000`;
    const plain = await wireGet(url);
    const br = await wireGet(url, { 'accept-encoding': 'gzip, deflate, br' });
    const gzip = await wireGet(url, { 'accept-encoding': 'gzip, deflate' });
    const refused = await wireGet(url, { 'accept-encoding': 'br;q=0, gzip;q=0' });

    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(br.headers['content-encoding']).toBe('br');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    for (const answer of [plain, br, gzip, refused]) {
      expect(answer.status).toBe(200);
      expect(answer.headers.vary).toMatch(/accept-encoding/i);
      expect(answer.headers['content-length']).toBe(String(answer.bytes.length));
      expect(answer.text).toBe(plain.text); // the same body, only coded
    }
    expect(JSON.parse(plain.text).upserts).toHaveLength(2_000);
    // 2,000 coupons: ~1 MB as JSON; on the wire a tenth or less
    expect(plain.bytes.length).toBeGreaterThan(500_000);
    expect(br.bytes.length).toBeLessThan(plain.bytes.length * 0.12);
    expect(gzip.bytes.length).toBeLessThan(plain.bytes.length * 0.15);
  });

  it('leaves small answers as they are', async () => {
    const api = await mockApi(10);
    const relay = createShopRelay(relayOptions(api.url));
    const origin = await serve(relay);
    await relay.refresh();
    const discovery = await wireGet(`${origin}/relay/v1`, { 'accept-encoding': 'br, gzip' });
    expect(discovery.status).toBe(200);
    expect(discovery.bytes.length).toBeLessThan(1_024);
    expect(discovery.headers['content-encoding']).toBeUndefined();
    expect(discovery.headers.vary).toMatch(/accept-encoding/i);
  });

  it('keeps the Vary fields a layer in front of it set (a CORS layer: Origin)', async () => {
    const api = await mockApi(10);
    const relay = createShopRelay(relayOptions(api.url));
    const origin = await serving(
      (req, res) => {
        res.setHeader('vary', 'Origin');
        relay(req, res);
      },
      () => relay.close(),
    );
    await relay.refresh();
    const answer = await wireGet(`${origin}/relay/v1/feed?limit=10`, { 'accept-encoding': 'br' });
    expect(answer.headers.vary).toBe('Origin, Accept-Encoding');
  });

  it('compresses a snapshot chunk once per version and coding, whatever the number of tills', async () => {
    const api = await mockApi(3_000);
    const relay = createShopRelay(relayOptions(api.url));
    const origin = await serve(relay);
    await relay.refresh();
    expect((await relay.status()).chunksCompressed).toBe(0);
    // forty tills read the snapshot (3 chunks of 1,000), twenty of them at once, then twenty more
    const readSnapshot = async (coding: string) => {
      let answer = await wireGet(`${origin}/relay/v1/feed?limit=1000`, { 'accept-encoding': coding });
      const body = () => JSON.parse(answer.text) as { cursor: string | null; handle: string };
      const codings = [answer.headers['content-encoding']];
      while (body().cursor !== null) {
        answer = await wireGet(`${origin}/relay/v1/feed?limit=1000&cursor=${body().cursor}&handle=${body().handle}`, {
          'accept-encoding': coding,
        });
        codings.push(answer.headers['content-encoding']);
      }
      return codings;
    };
    const first = await Promise.all(Array.from({ length: 20 }, () => readSnapshot('br')));
    const then = await Promise.all(Array.from({ length: 20 }, () => readSnapshot('gzip, deflate, br')));
    expect([...first, ...then].flat().every((c) => c === 'br')).toBe(true);
    expect((await relay.status()).chunksCompressed).toBe(3);
    // gzip is a coding of its own: once more per chunk
    await Promise.all(Array.from({ length: 5 }, () => readSnapshot('gzip')));
    expect((await relay.status()).chunksCompressed).toBe(6);
    // a new version: its chunks are compressed again (once)
    api.upsertCoupon({ ...api.data.coupons[5]!, apply_sale_price: 4_343 });
    await relay.refresh();
    await Promise.all(Array.from({ length: 5 }, () => readSnapshot('br')));
    expect((await relay.status()).chunksCompressed).toBe(9);
  }, 60_000);

  it('answers 304 to a till holding the ETag of a compressed answer, with or without Accept-Encoding', async () => {
    const api = await mockApi(2_000);
    const relay = createShopRelay(relayOptions(api.url));
    const origin = await serve(relay);
    await relay.refresh();
    const chunk = await wireGet(`${origin}/relay/v1/feed?limit=5000`, { 'accept-encoding': 'br' });
    expect(chunk.headers['content-encoding']).toBe('br');
    const { version, handle } = JSON.parse(chunk.text) as { version: number; handle: string };
    const changes = await wireGet(`${origin}/relay/v1/feed?since=${version}&handle=${handle}`, {
      'accept-encoding': 'br',
    });
    const etag = String(changes.headers.etag);
    // one tag for every coding of one version: weak, since their bytes differ (RFC 9110 §8.8.1)
    expect(etag).toMatch(/^W\/"/);
    expect(chunk.headers.etag).toMatch(/^W\/"/);
    const since = `${origin}/relay/v1/feed?since=${version}&handle=${handle}`;
    for (const coding of ['br', 'gzip', undefined]) {
      const again = await wireGet(since, { 'if-none-match': etag, ...(coding ? { 'accept-encoding': coding } : {}) });
      expect(again.status, String(coding)).toBe(304);
      expect(again.bytes.length).toBe(0);
      expect(again.headers.vary).toMatch(/accept-encoding/i);
    }
    // a till that kept a tag from before tags were weak: still the same version (weak comparison, §13.1.2)
    const strong = etag.replace(/^W\//, '');
    expect((await wireGet(since, { 'if-none-match': strong, 'accept-encoding': 'br' })).status).toBe(304);
  });

  it('sends another instance the chunk bytes the first one kept in their shared store (memory)', async () => {
    const api = await mockApi(2_000);
    const store = createMemoryStore();
    const a = createShopRelay(relayOptions(api.url, store));
    const b = createShopRelay(relayOptions(api.url, store));
    const askA = await serve(a);
    const askB = await serve(b);
    await a.refresh();
    await b.refresh();
    const path = '/relay/v1/feed?limit=5000';
    const fromA = await wireGet(`${askA}${path}`, { 'accept-encoding': 'br' });
    const fromB = await wireGet(`${askB}${path}`, { 'accept-encoding': 'br' });
    expect(fromA.headers['content-encoding']).toBe('br');
    expect(fromB.bytes.equals(fromA.bytes)).toBe(true);
    expect((await a.status()).chunksCompressed).toBe(1);
    expect((await b.status()).chunksCompressed).toBe(0);
  });

  it('sends another instance the chunk bytes the first one kept in Redis', async () => {
    redis ??= await startRedisServer();
    const api = await mockApi(2_000);
    const stores: RelayStore[] = [];
    for (let i = 0; i < 2; i++)
      stores.push(await createRedisStore({ redis: redis.url, shopId: `kept-${process.pid}` }));
    const [a, b] = stores.map((store) => createShopRelay(relayOptions(api.url, store)));
    const askA = await serve(a!);
    const askB = await serve(b!);
    await a!.refresh();
    await b!.refresh();
    const path = '/relay/v1/feed?limit=5000';
    const fromA = await wireGet(`${askA}${path}`, { 'accept-encoding': 'gzip' });
    const fromB = await wireGet(`${askB}${path}`, { 'accept-encoding': 'gzip' });
    expect(fromA.headers['content-encoding']).toBe('gzip');
    expect(fromB.headers['content-encoding']).toBe('gzip');
    expect(fromB.bytes.equals(fromA.bytes)).toBe(true);
    expect(JSON.parse(fromB.text).upserts).toHaveLength(2_000);
    expect((await a!.status()).chunksCompressed).toBe(1);
    expect((await b!.status()).chunksCompressed).toBe(0);
    // a new version's chunk takes the slot: B compresses it (A's kept bytes are of the version before)
    api.upsertCoupon({ ...api.data.coupons[7]!, apply_sale_price: 4_545 });
    await b!.refresh();
    await a!.refresh();
    const newer = await wireGet(`${askB}${path}`, { 'accept-encoding': 'gzip' });
    expect(newer.text).toContain('4545');
    expect((await b!.status()).chunksCompressed).toBe(1);
    expect((await wireGet(`${askA}${path}`, { 'accept-encoding': 'gzip' })).bytes.equals(newer.bytes)).toBe(true);
    expect((await a!.status()).chunksCompressed).toBe(1);
  });
});

describe('compressed answers of the proxy', () => {
  it('forwards a list page compressed as asked, and as it is without Accept-Encoding', async () => {
    const api = await mockApi(300);
    const proxy = createShopApiProxy({ key: KEY, secret: SECRET, target: api.url, rateLimits: false, public: true });
    const origin = await serving(
      (req, res) => proxy(req, res),
      () => proxy.close(),
    );
    const url = `${origin}/v2/shop/coupons?offset=1&limit=100`;
    const plain = await wireGet(url);
    const br = await wireGet(url, { 'accept-encoding': 'br;q=0.9, gzip;q=0.1' });
    const gzip = await wireGet(url, { 'accept-encoding': 'br;q=0.1, gzip;q=0.9' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(br.headers['content-encoding']).toBe('br');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(br.text).data.list).toHaveLength(100);
    expect(JSON.parse(gzip.text).data).toEqual(JSON.parse(plain.text).data);
    expect(br.bytes.length).toBeLessThan(plain.bytes.length / 4);
    expect(br.headers.vary).toMatch(/accept-encoding/i);
  });
});
