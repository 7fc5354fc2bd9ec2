// Fixtures for the relay tests: the real mock API on 127.0.0.1, a relay in front of it on its own loopback
// server, and small clients of the relay's feed.
import { createServer, type Server } from 'node:http';
import { afterEach } from 'vitest';
import type { AddressInfo } from 'node:net';
import { startMockShopApi, type MockShopApi, type MockShopApiOptions } from '@shop-lookup/mock-server';
import { createShopRelay, type ShopRelay, type ShopRelayOptions } from '@shop-lookup/relay';

export const KEY = 'demo-key';
export const SECRET = 'demo-secret';
export const BASE = '/shop-api';

export type Json = Record<string, any>;

interface RelayAnswer {
  status: number;
  headers: Headers;
  text: string;
  body: Json | undefined;
}

export interface RelayFixture {
  api: MockShopApi;
  relay: ShopRelay;
  /** The server's origin ('http://127.0.0.1:<port>'). */
  origin: string;
  /** GET (or any method) on a path under basePath. */
  get(path: string, init?: RequestInit): Promise<RelayAnswer>;
  /** Reads a whole snapshot through the feed; returns the records by `resource/key`, and the version to go on from. */
  snapshot(limit?: number): Promise<{ records: Map<string, unknown>; version: number; handle: string; etag: string }>;
  /** Upstream list calls so far (the mock's request log). */
  listCalls(): number;
  close(): Promise<void>;
}

const toJson = (text: string): Json | undefined => {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
};

export function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    );
  });
}

/** A relay (public, no rate limits, quick retries, unless overridden) in front of a fresh mock. */
export async function startRelay(
  relayOptions: Partial<ShopRelayOptions> = {},
  mockOptions: MockShopApiOptions = {},
): Promise<RelayFixture> {
  const api = await startMockShopApi({ rateLimits: false, ...mockOptions });
  const relay = createShopRelay({
    key: KEY,
    secret: SECRET,
    target: api.url,
    basePath: BASE,
    public: true,
    rateLimits: false,
    retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 50 },
    ...relayOptions,
  });
  const { server, origin } = await listen((req, res) => relay(req, res));

  async function get(path: string, init: RequestInit = {}): Promise<RelayAnswer> {
    const res = await fetch(`${origin}${BASE}${path}`, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: toJson(text) };
  }

  return {
    api,
    relay,
    origin,
    get,
    async snapshot(limit = 5_000) {
      const records = new Map<string, unknown>();
      let first = await get(`/relay/v1/feed?limit=${limit}`);
      const { handle, version } = first.body!;
      const etag = first.headers.get('etag') ?? '';
      for (;;) {
        for (const u of first.body!.upserts) records.set(`${u.resource}/${u.key}`, u.record);
        if (first.body!.cursor === null) break;
        first = await get(`/relay/v1/feed?cursor=${first.body!.cursor}&handle=${handle}&limit=${limit}`);
      }
      return { records, version, handle, etag };
    },
    listCalls: () =>
      api.requests.filter((r) => r.query.offset !== undefined || /\/options$|\/coupons$/.test(r.path)).length,
    async close() {
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await api.close();
    },
  };
}

/**
 * Call at the top of a test file: returns `relayWith(relayOptions, mockOptions)`, a started relay (ready, and
 * listed once unless `listed: false`) closed after each test, and `track(fixture)` for fixtures started otherwise.
 */
export function relaysPerTest() {
  const open: RelayFixture[] = [];
  afterEach(async () => {
    for (const f of open.splice(0)) await f.close();
  });
  return {
    track(f: RelayFixture): RelayFixture {
      open.push(f);
      return f;
    },
    async relayWith(
      relayOptions: Partial<ShopRelayOptions> = {},
      mockOptions: MockShopApiOptions = {},
      { listed = false }: { listed?: boolean } = {},
    ): Promise<RelayFixture> {
      const f = await startRelay(relayOptions, mockOptions);
      open.push(f);
      await f.relay.ready;
      if (listed) await f.relay.refresh();
      return f;
    },
  };
}
