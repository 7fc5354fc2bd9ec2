// A storefront's start (coupons: 'byCode' with tracked products): its products' options are asked for at once, shown
// while the database is still opening, stored by the start sync as its own first page, and never shown going back
// to the empty database. The host's sync() reads the API as of its ask. The open is held by the test, not timed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import type { ShopLookup } from '../src';
import type { EngineApi, LookupResult, WatchListener } from '../src/protocol';
import { answerWhileOpening } from '../worker/engine/answerWhileOpening';
import type { EngineDeps } from '../worker/engine/createEngine';
import { openStore } from '../worker/store/store';
import type { OpeningReads } from '../worker/sync/openingReads';
import { createConnectivity } from '../worker/tabs/connectivity';
import { lookupWithEngine, next, record, startMock, waitFor } from './utils';

const PRODUCT = 13805;
const OPTIONS_PATH = `/v2/shop/products/${PRODUCT}/options`;

/** Opens the database only when the test says so. */
function heldOpen() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let opened = false;
  const open: typeof openStore = (name, platform) => {
    const db = openStore(name, platform);
    const original = db.open.bind(db);
    db.open = (() => gate.then(() => original()).then((d) => ((opened = true), d))) as typeof db.open;
    return db;
  };
  return { openStore: open, release, opened: () => opened };
}

describe('storefrontOpening', () => {
  let mock: MockShopApi;
  let lookup: (ShopLookup & { dispose(): void }) | undefined;

  beforeEach(async () => {
    mock = await startMock();
  });
  afterEach(async () => {
    await lookup?.close();
    lookup?.dispose();
    lookup = undefined;
    await mock.close();
  });

  const start = (deps: EngineDeps = {}) => {
    lookup = lookupWithEngine(mock, deps, { products: [PRODUCT], coupons: 'byCode' });
    return lookup;
  };
  const optionRequests = () => mock.requests.filter((r) => r.path === OPTIONS_PATH).length;
  const theOptions = () => [...mock.data.products.get(PRODUCT)!].sort((a, b) => Number(a.no) - Number(b.no));

  it("shows a tracked product's options while the database is still opening, and never goes back to older data", async () => {
    const db = heldOpen();
    const shop = start({ openStore: db.openStore });
    const seen = record(shop.productOptions(PRODUCT));
    const first = await next(shop.productOptions(PRODUCT), (r) => r.syncedAt !== null);
    expect(db.opened()).toBe(false);
    expect(first.data.map((o) => o.no)).toEqual(theOptions().map((o) => Number(o.no)));
    expect(first).toMatchObject({ fetching: false, offline: false, error: null });

    db.release();
    // stored by the start sync: the status tells it, and a lookup started now answers from the database
    await next(shop.status(), (s) => s.phase === 'idle' && s.lastSyncedAt.options !== null);
    const stored = await next(shop.productOptions(PRODUCT), (r) => r.syncedAt !== null && !r.fetching);
    expect(stored.data).toEqual(first.data);
    await waitFor(() => expect(seen.values.length).toBeGreaterThan(0));
    seen.stop();
    // every emission of the lookup opened first is the product's list, confirmed: never the empty database
    expect(seen.values.length).toBeGreaterThan(0);
    for (const v of seen.values) {
      expect(v.syncedAt).not.toBeNull();
      expect(v.data.map((o) => o.no)).toEqual(first.data.map((o) => o.no));
    }
  });

  it("makes the opening read the start sync's own: the product is asked for once", async () => {
    const shop = start();
    const idle = await next(shop.status(), (s) => s.phase === 'idle' && s.lastSyncedAt.options !== null);
    expect(idle.lastError).toBeNull();
    expect(optionRequests()).toBe(1);
  });

  it("reads the API again for the host's sync(), asked after the opening read was answered", async () => {
    const db = heldOpen();
    const shop = start({ openStore: db.openStore });
    const first = await next(shop.productOptions(PRODUCT), (r) => r.syncedAt !== null);
    const [one, ...rest] = theOptions();
    const renamed = { ...one!, name: 'renamed after the opening read' };
    mock.setProductOptions(PRODUCT, [renamed, ...rest]);
    const asked = shop.sync();
    db.release();
    expect(await asked).toMatchObject({ ok: true });
    const after = await next(shop.productOptions(PRODUCT), (r) => r.data.some((o) => o.name === renamed.name));
    expect(after.syncedAt).toBeGreaterThanOrEqual(first.syncedAt!);
    expect(optionRequests()).toBeGreaterThanOrEqual(2);
  });

  it('answers from the database alone when the opening read fails', async () => {
    mock.setDown(true);
    const shop = start();
    const down = await next(shop.productOptions(PRODUCT), (r) => r.error !== null);
    expect(down).toMatchObject({ data: [], syncedAt: null });
    mock.setDown(false);
    expect(await shop.sync()).toMatchObject({ ok: true });
    const up = await next(shop.productOptions(PRODUCT), (r) => r.syncedAt !== null && r.data.length > 0);
    expect(up.data.length).toBe(theOptions().length);
  });
});

describe('storefrontOpening, a reload within the refresh interval', () => {
  let mock: MockShopApi;
  beforeEach(async () => {
    mock = await startMock();
  });
  afterEach(async () => {
    await mock.close();
  });

  it('stores what the opening read found although the stored copy was fresh enough to wait, and shows nothing older', async () => {
    const idb = new IDBFactory();
    const dbName = `reload-${Date.now()}`;
    const first = lookupWithEngine(
      mock,
      { indexedDB: idb, IDBKeyRange },
      { products: [PRODUCT], coupons: 'byCode', dbName },
    );
    await next(first.status(), (s) => s.phase === 'idle' && s.lastSyncedAt.options !== null);
    await first.close();
    first.dispose();

    const [one, ...rest] = [...mock.data.products.get(PRODUCT)!].sort((a, b) => Number(a.no) - Number(b.no));
    const renamed = { ...one!, name: 'renamed since the last visit' };
    mock.setProductOptions(PRODUCT, [renamed, ...rest]);
    const db = heldOpen();
    const again = lookupWithEngine(
      mock,
      { indexedDB: idb, IDBKeyRange, openStore: db.openStore },
      { products: [PRODUCT], coupons: 'byCode', dbName },
    );
    try {
      const seen = record(again.productOptions(PRODUCT));
      const shown = await next(again.productOptions(PRODUCT), (r) => r.syncedAt !== null);
      expect(shown.data.some((o) => o.name === renamed.name)).toBe(true);
      db.release();
      await next(again.status(), (s) => s.phase === 'idle' && (s.lastSyncedAt.options ?? 0) >= shown.syncedAt!);
      const stored = await openStore(dbName, { indexedDB: idb, IDBKeyRange }).options.get([PRODUCT, Number(one!.no)]);
      expect(stored?.name).toBe(renamed.name);
      seen.stop();
      for (const v of seen.values) expect(v.data.some((o) => o.name === renamed.name)).toBe(true);
    } finally {
      await again.close();
      again.dispose();
    }
  });
});

describe('answerWhileOpening', () => {
  const answer = (
    syncedAt: number | null,
    data: unknown[],
    flags: Partial<LookupResult<unknown>> = {},
  ): LookupResult<unknown> => ({
    data,
    syncedAt,
    fetching: false,
    offline: false,
    error: null,
    ...flags,
  });

  it("passes the engine's offline and fetching flags on with the opening answer while the engine's copy is older", async () => {
    const told: [number, unknown][] = [];
    let engineListener!: WatchListener;
    const engine = { watchFirst: async () => answer(1_000, ['old']), unwatch: () => undefined } as unknown as EngineApi;
    const opening = {
      answer: async () => answer(5_000, ['new']),
      settled: Promise.resolve(),
      end: () => undefined,
    } as unknown as OpeningReads;
    const api = answerWhileOpening({
      listener: (id, value) => told.push([id, value]),
      productNos: [PRODUCT],
      opening,
      connectivity: createConnectivity({}),
      assemble: async (l) => {
        engineListener = l;
        return engine;
      },
    });
    expect(await api.watchFirst(7, { kind: 'productOptions', productNo: PRODUCT })).toEqual(answer(5_000, ['new']));
    await waitFor(() => expect(engineListener).toBeDefined());
    engineListener(7, answer(1_000, ['old'])); // the same older copy: nothing to show
    engineListener(7, answer(1_000, ['old'], { offline: true }));
    engineListener(7, answer(5_000, ['new'], { offline: true })); // caught up
    engineListener(7, answer(1_000, ['older than the hold, shown once it is released']));
    expect(told).toEqual([
      [7, answer(5_000, ['new'], { offline: true })],
      [7, answer(5_000, ['new'], { offline: true })],
      [7, answer(1_000, ['older than the hold, shown once it is released'])],
    ]);
  });

  it('shows a failure the engine reports at once', async () => {
    const told: unknown[] = [];
    let engineListener!: WatchListener;
    const failure = answer(null, [], { error: { code: 'shop_mismatch', message: 'another shop' } });
    const api = answerWhileOpening({
      listener: (_id, value) => told.push(value),
      productNos: [PRODUCT],
      opening: {
        answer: async () => answer(5_000, ['new']),
        settled: Promise.resolve(),
        end: () => undefined,
      } as unknown as OpeningReads,
      connectivity: createConnectivity({}),
      assemble: async (l) => {
        engineListener = l;
        return { watchFirst: async () => failure, unwatch: () => undefined } as unknown as EngineApi;
      },
    });
    await api.watchFirst(1, { kind: 'productOptions', productNo: PRODUCT });
    await waitFor(() => expect(told).toEqual([failure]));
    expect(engineListener).toBeDefined();
  });
});
