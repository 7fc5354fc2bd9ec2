// The worker bridge in-process: the engine exposed with Comlink on one end of a MessageChannel, createShopLookup on
// the other (as comlink's own same-window tests do). Real Comlink messages, real structured clone.
import { expose } from 'comlink';
import type { Observable } from 'rxjs';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockShopApi } from '@shop-lookup/mock-server';
import { createShopLookup, type ShopLookup } from '../src';
import type { WorkerApi } from '../src/protocol';
import { createWorkerApi } from '../worker/workerApi';
import { confirmed, KEY, next, SECRET, startMock, waitFor } from './utils';

/**
 * Counts the MessageChannels Comlink makes (one per proxied value) and whether the end that stays here (port1,
 * exposed by Comlink; port2 is transferred away) gets closed, which Comlink does when the other side releases it.
 */
function trackChannels() {
  const Original = globalThis.MessageChannel;
  const ports: { port: MessagePort; closed: boolean }[] = [];
  class Tracked extends Original {
    constructor() {
      super();
      const port = this.port1;
      const entry = { port, closed: false };
      const close = port.close.bind(port);
      port.close = () => {
        entry.closed = true;
        close();
      };
      ports.push(entry);
    }
  }
  globalThis.MessageChannel = Tracked as typeof MessageChannel;
  return {
    get created() {
      return ports.length;
    },
    get open() {
      return ports.filter((p) => !p.closed).length;
    },
    restore: () => {
      globalThis.MessageChannel = Original;
    },
  };
}

describe('the worker bridge over a MessageChannel', () => {
  let mock: MockShopApi;
  let engineSide: WorkerApi;
  let channel: MessageChannel;
  let lookup: ShopLookup;
  let channels: ReturnType<typeof trackChannels>;

  beforeEach(async () => {
    mock = await startMock();
    channel = new MessageChannel();
    channels = trackChannels();
    engineSide = createWorkerApi({ indexedDB: new IDBFactory(), IDBKeyRange, fetch });
    expose(engineSide, channel.port1);
    lookup = createShopLookup({
      baseUrl: mock.url,
      auth: { key: KEY, secret: SECRET },
      worker: () => channel.port2,
      rateLimits: false,
      products: [13805],
      dbName: `bridge-${Math.random()}`,
    });
  });
  afterEach(async () => {
    await lookup.close();
    channels.restore();
    channel.port1.close();
    channel.port2.close();
    await mock.close();
  });

  it('answers all six lookups through Comlink', async () => {
    const report = await lookup.sync();
    expect(report).toMatchObject({ ok: true, rejected: 0 });
    expect((await confirmed(lookup.coupons())).data).toHaveLength(240);
    expect((await confirmed(lookup.coupon('WELCOME10'))).data?.apply_sale_percent).toBe(10);
    expect((await next(lookup.issuedCoupon('IC-0000-OPEN'), (r) => r.data !== null)).data?.coupon_issue_code).toBe(
      'IC-0000-OPEN',
    );
    expect((await confirmed(lookup.productOptions(13805))).data.length).toBeGreaterThan(1);
    expect((await confirmed(lookup.productOptionByNo(13805, 12))).data?.code).toBe('SIZE');
    expect((await confirmed(lookup.productOptionByCode(13805, '12'))).data?.no).toBe(3);
  });

  it('carries errors across as plain data with a code', async () => {
    const bad = await next(lookup.coupon(''), (r) => r.error !== null);
    expect(bad.error).toEqual({ code: 'bad_request', message: 'A coupon code must be a non-empty string.' });
  });

  it('leaves no open watch and makes no proxy per subscription', async () => {
    await lookup.sync();
    const madeAtStart = channels.created; // the one listener proxy of this connection
    for (let round = 0; round < 3; round++) {
      const subs = [
        lookup.coupons(),
        lookup.coupon('WELCOME10'),
        lookup.issuedCoupon('IC-0000-OPEN'),
        lookup.productOptions(13805),
        lookup.productOptionByNo(13805, 12),
        lookup.productOptionByCode(13805, '12'),
        lookup.status(),
      ].map((o: Observable<unknown>) => o.subscribe());
      await next(lookup.coupon('FIXED3000'));
      expect(engineSide.activeWatches()).toBeGreaterThanOrEqual(7);
      for (const s of subs) s.unsubscribe();
    }
    // each unwatch crosses the channel: wait for the engine to have had them all
    await waitFor(() => expect(engineSide.activeWatches()).toBe(0));
    expect(channels.created).toBe(madeAtStart);
  });

  it('releases the listener proxy on close and completes open lookups', async () => {
    let completed = false;
    lookup.coupon('WELCOME10').subscribe({ complete: () => (completed = true) });
    await lookup.sync();
    expect(channels.open).toBeGreaterThan(0);
    await lookup.close();
    expect(completed).toBe(true);
    await waitFor(() => expect(channels.open).toBe(0)); // the release message crosses the channel
    await expect(lookup.sync()).rejects.toMatchObject({ code: 'closed' });
  });

  it('completes a lookup subscribed after close() at once, without a value', async () => {
    await lookup.close();
    const values: unknown[] = [];
    let completed = false;
    lookup.coupon('WELCOME10').subscribe({ next: (v) => values.push(v), complete: () => (completed = true) });
    lookup.status().subscribe({ next: (v) => values.push(v) });
    expect(completed).toBe(true);
    expect(values).toEqual([]);
  });
});
