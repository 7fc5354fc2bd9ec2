// A snapshot read in chunks from several relay instances (a load balancer sends each request anywhere): a chunk
// is never older than the version its cursor names, so the till's catch-up from that version completes it.
import { afterEach, describe, expect, it } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createMemoryStore, createShopRelay, type ShopRelay } from '../src';
import type { RelayStore } from '../src/store/relayStore';
import { listen, type Json } from '@shop-lookup/test-kit/relayUtils';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function serve(relay: ShopRelay): Promise<(path: string) => Promise<Json>> {
  const { server, origin } = await listen((req, res) => relay(req, res));
  open.push({
    async close() {
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return async (path) => (await (await fetch(`${origin}${path}`)).json()) as Json;
}

describe('relay snapshot chunks across instances', () => {
  it('catches up before serving a chunk whose cursor names a newer version than its own copy', async () => {
    const api: MockShopApi = await startMockShopApi({ rateLimits: false, data: { coupons: 30 } });
    open.push(api);
    const shared = createMemoryStore();
    // instance B hears no commits of A (a pub/sub message still on its way): its copy stays where it was
    const deaf: RelayStore = { ...shared, onHeadChange: () => () => undefined };
    const options = {
      key: 'demo-key',
      secret: 'demo-secret',
      target: api.url,
      rateLimits: false as const,
      public: true,
      refreshIntervalMs: 3_600_000,
    };
    const a = createShopRelay({ ...options, store: shared });
    const b = createShopRelay({ ...options, store: deaf });
    const askA = await serve(a);
    const askB = await serve(b);
    await a.refresh();
    await b.ready;
    // B catches up with A's first listing (asked for a version it has not seen, it reads the store)
    const v1 = await askA('/relay/v1/feed?limit=1');
    await askB(`/relay/v1/feed?since=${v1.version}&handle=${v1.handle}`);
    const before = await askB('/relay/v1/feed?limit=1000');
    expect(before.upserts).toHaveLength(30);
    const changed = api.data.coupons[20]!;
    api.upsertCoupon({ ...changed, apply_sale_price: 4_242 });
    await a.refresh();

    // the first chunk from A (the new version), the rest from B
    const first = await askA('/relay/v1/feed?limit=1');
    expect(first.version).toBeGreaterThan(before.version);
    // (a cursor keeps the chunk size its snapshot started with: one record a chunk here)
    const rest: Json[] = [];
    for (let cursor = first.cursor; cursor !== null; ) {
      const chunk = await askB(`/relay/v1/feed?cursor=${cursor}&handle=${first.handle}`);
      expect(chunk.version).toBe(first.version);
      rest.push(...chunk.upserts);
      cursor = chunk.cursor;
    }
    expect(rest).toHaveLength(29);
    const record = rest.find((u: Json) => u.key === changed.coupon_code);
    expect(record?.record.apply_sale_price).toBe(4_242);
  });
});
