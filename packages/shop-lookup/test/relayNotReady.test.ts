// A relay that has not finished its first listing of the shop says so: its feed answers 503 `relay_not_ready`
// with Retry-After instead of an empty snapshot, the till's sync() reports it (ok: false, that code, nothing
// stored, the same in status()), and the till takes the data by itself the moment the relay has it: its live
// long-poll waits on the relay (`wait`) for the first listing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MockHold, MockShopApi } from '@shop-lookup/mock-server';
import { createShopRelay, type ShopRelay } from '@shop-lookup/relay';
import type { ShopLookup } from '../src';
import { KEY, lookupFor, record, SECRET, startMock, steppedClock } from './utils';

describe('a relay that has not finished its first listing', () => {
  let mock: MockShopApi;
  let relay: ShopRelay;
  let server: Server;
  let base: string;
  let held: MockHold;
  let till: ShopLookup | undefined;

  beforeEach(async () => {
    mock = await startMock();
    // the relay's first coupon listing waits at the API until the test releases it
    held = mock.hold({ path: '/v2/shop/coupons' });
    relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      public: true,
      rateLimits: false,
    });
    server = createServer((req, res) => relay(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/shop-api`;
    await held.arrived;
  });
  afterEach(async () => {
    held.release();
    await till?.close();
    await relay.close();
    await new Promise((r) => server.close(r));
    await mock.close();
  });

  it('answers a snapshot request 503 relay_not_ready with Retry-After, not an empty snapshot; with wait, as soon as it is ready', async () => {
    const res = await fetch(`${base}/relay/v1/feed`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({
      code: 'relay_not_ready',
      message: expect.stringMatching(/first listing/),
    });
    // with `wait`, the request is held until the first listing is in, then answered with the snapshot
    const waiting = fetch(`${base}/relay/v1/feed?wait=30`);
    await expect.poll(async () => (await relay.status()).waiting).toBe(1);
    held.release();
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { upserts: unknown[] }).upserts.length).toBeGreaterThan(0);
  });

  it('sync() says "relay not ready" and stores nothing; the till takes the data the moment the relay has it', async () => {
    // fake timers from the start: every pause of the till's is on the clock the test moves
    const clock = steppedClock();
    /** A promise's value, moving the clock while waiting for it. */
    const settled = async <T>(promise: Promise<T>): Promise<T> => {
      let done = false;
      let value: T | undefined;
      void promise.then((v) => ((value = v), (done = true)));
      await clock.until(() => done);
      return value as T;
    };
    try {
      till = lookupFor({ url: base }, { auth: undefined });
      const status = record(till.status());
      const coupons = record(till.coupons());
      const report = await settled(till.sync());
      expect(report).toMatchObject({ ok: false, written: 0, errors: [{ code: 'relay_not_ready', status: 503 }] });
      expect(report.errors[0]!.message).toMatch(/not finished its first listing/);
      expect(status.values.at(-1)).toMatchObject({ source: 'relay', lastError: { code: 'relay_not_ready' } });
      expect(coupons.values.at(-1)?.data).toEqual([]);

      // no sync() from here on: the till waits for the relay by itself, however long it takes
      await clock.pass(150_000);
      expect(status.values.at(-1)).toMatchObject({ lastError: { code: 'relay_not_ready' } });
      held.release();
      await settled(relay.refresh());
      const readyAt = clock.ms;
      await clock.until(() => status.values.at(-1)?.lastSyncedAt.coupons != null);
      // woken by the listing's commit: no backoff pause between the relay having the data and the till taking it
      expect(clock.ms - readyAt).toBeLessThanOrEqual(1_000);
      expect(status.values.at(-1)).toMatchObject({ lastError: null, source: 'relay' });
      await clock.until(() => coupons.values.at(-1)?.data.length === mock.data.coupons.length);
      expect(coupons.values.at(-1)?.data).toHaveLength(mock.data.coupons.length);
      status.stop();
      coupons.stop();
    } finally {
      clock.restore();
    }
  });
});

describe('a relay and a till started while the API is down', () => {
  it('the relay lists as soon as the API is up (2 s, 4 s, ... after failing), and the till takes the data by itself', async () => {
    const mock = await startMock();
    mock.setDown(true);
    const clock = steppedClock();
    const relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      public: true,
      rateLimits: false,
      retry: { retries: 1, baseDelayMs: 10, maxDelayMs: 10 },
    });
    const server = createServer((req, res) => relay(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const till = lookupFor(
      { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/shop-api` },
      { auth: undefined },
    );
    try {
      const status = record(till.status());
      // the relay's first listing failed, and the till was told the relay is not ready
      await clock.until(() => status.values.some((s) => s.lastError?.code === 'relay_not_ready'));
      expect((await relay.status()).error).toMatch(/coupons/);
      await clock.pass(10_000);
      expect(status.values.at(-1)?.lastSyncedAt.coupons).toBeNull();

      mock.setDown(false);
      const upAt = clock.ms;
      await clock.until(() => status.values.at(-1)?.lastSyncedAt.coupons != null || clock.ms - upAt > 30_000, 15_000);
      // the relay's next try (at most 16 s after its failures so far); the till takes its data at once
      expect(clock.ms - upAt).toBeLessThanOrEqual(16_000 + 1_000);
      expect(status.values.at(-1)).toMatchObject({ lastError: null, source: 'relay' });
      status.stop();
    } finally {
      clock.restore();
      await till.close();
      await relay.close();
      await new Promise((r) => server.close(r));
      await mock.close();
    }
  });
});
