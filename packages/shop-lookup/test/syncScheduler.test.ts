// When the engine syncs by itself (worker/sync/syncScheduler.ts): after any failed sync it tries again with
// growing pauses (2 s, 4 s, ... 60 s) until one succeeds, also when the very first sync found the API down.
// Driven by fake timers: the scheduler alone with a sync the test answers, then a whole engine started while the
// mock API was down, which syncs within the first pause of the backoff once the API is up.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import type { LookupErrorCode, SyncReport } from '../src';
import { createConnectivity } from '../worker/tabs/connectivity';
import { createSyncScheduler } from '../worker/sync/syncScheduler';
import { fakeLeadership, lookupFor, record, steppedClock } from './utils';

const report = (ok: boolean, code: LookupErrorCode = 'network_error'): SyncReport => ({
  ok,
  fetched: 0,
  written: 0,
  deleted: 0,
  rejected: 0,
  requests: 1,
  errors: ok ? [] : [{ code, message: code }],
});

/** The platform's online flag as a test sets it, with its events. */
function platform(onLine = true) {
  const listeners = new Map<string, () => void>();
  const navigator = { onLine };
  return {
    navigator,
    addEventListener: (type: string, fn: () => void) => void listeners.set(type, fn),
    removeEventListener: (type: string) => void listeners.delete(type),
    set(online: boolean) {
      navigator.onLine = online;
      listeners.get(online ? 'online' : 'offline')?.();
    },
  };
}

describe('the sync scheduler', () => {
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const s of stops.splice(0)) s();
    vi.useRealTimers();
  });

  /** A scheduler whose syncs answer what `outcomes` says, in turn (then ok); each start is timed. */
  function start(outcomes: SyncReport[], { onLine = true, unreachable = false } = {}) {
    vi.useFakeTimers({ now: 0 });
    const net = platform(onLine);
    const connectivity = createConnectivity(net);
    if (unreachable) connectivity.reportUnreachable();
    const leadership = fakeLeadership(true);
    const startedAt: number[] = [];
    const sync = vi.fn(async () => {
      startedAt.push(Date.now());
      const r = outcomes.shift() ?? report(true);
      if (r.ok) connectivity.reportAnswer();
      else if (r.errors[0]?.code === 'network_error') connectivity.reportUnreachable();
      return r;
    });
    const scheduler = createSyncScheduler({
      sync,
      isDue: async () => true,
      ready: Promise.resolve(true),
      connectivity,
      leadership,
      refreshIntervalMs: 300_000,
      onReconnect: () => undefined,
    });
    stops.push(() => scheduler.dispose());
    return { startedAt, connectivity, leadership, net, scheduler };
  }

  it('syncs at start although the API was found unreachable, then retries at 2, 4, 8, ... up to 60 s until one succeeds', async () => {
    const failures = Array.from({ length: 7 }, () => report(false));
    const { startedAt } = start(failures, { unreachable: true });
    await vi.advanceTimersByTimeAsync(0);
    expect(startedAt).toEqual([0]);
    await vi.advanceTimersByTimeAsync(300_000);
    // 2 + 4 + 8 + 16 + 32 + 60 + 60: the eighth sync succeeds, and none follows it before the refresh interval
    expect(startedAt).toEqual([0, 2_000, 6_000, 14_000, 30_000, 62_000, 122_000, 182_000, 300_000]);
  });

  it('retries a failure that came with an answer too (a 5xx), and starts again at 2 s after a success', async () => {
    const { startedAt } = start([
      report(false, 'server_error'),
      report(false, 'server_error'),
      report(true),
      report(false, 'maintenance'),
    ]);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(startedAt).toEqual([0, 2_000, 6_000]);
    await vi.advanceTimersByTimeAsync(294_000); // the refresh interval's sync fails: 2 s again, not 8 s
    await vi.advanceTimersByTimeAsync(2_000);
    expect(startedAt).toEqual([0, 2_000, 6_000, 300_000, 302_000]);
  });

  it('waits for the online event while the platform says there is no network, then syncs at once', async () => {
    const { startedAt, net } = start([], { onLine: false });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(startedAt).toEqual([]);
    net.set(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(startedAt).toEqual([120_000]);
  });

  it("starts the retries when a request outside a sync (a lookup's refresh) finds the API gone", async () => {
    const { startedAt, connectivity } = start([report(true), report(false), report(true)]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(startedAt).toEqual([0]);
    connectivity.reportUnreachable();
    await vi.advanceTimersByTimeAsync(6_000);
    expect(startedAt).toEqual([0, 12_000, 16_000]);
  });

  it('leaves the retries to the new leader when this engine stops leading', async () => {
    const { startedAt, leadership } = start([report(false), report(false)]);
    await vi.advanceTimersByTimeAsync(0);
    leadership.set(false);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(startedAt).toEqual([0]);
  });
});

describe('an engine started while the API is down', () => {
  let mock: MockShopApi | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await mock?.close();
  });

  it('syncs within the first pause of the backoff once the API is up, without a reload or a call to sync()', async () => {
    mock = await startMockShopApi({ rateLimits: false });
    const api = mock;
    // Down: every request is refused at once, as by a closed port (the kernel's answer, without its timing: the
    // engine finds the API unreachable before it decides on its first sync, as a till often does).
    let down = true;
    const refusingFetch: typeof fetch = (input, init) =>
      down
        ? Promise.reject(
            new TypeError('fetch failed', {
              cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
            }),
          )
        : fetch(input, init);
    // Only the timers are fake (the clock the backoff counts); requests and IndexedDB run for real in between.
    const clock = steppedClock();
    const lookup = lookupFor(api, { fetch: refusingFetch });
    try {
      // (no lookup is open yet: an open list lookup would ask for a sync of its own)
      const status = record(lookup.status());
      // the first sync fails: nothing answers
      await clock.until(() => status.values.some((s) => s.lastError?.code === 'network_error'), 10_000);
      const failedAt = clock.ms;
      expect(status.values.at(-1)).toMatchObject({
        online: false,
        progress: null,
        lastError: { code: 'network_error' },
      });

      // the API comes up: the next sync starts when the first pause of the backoff (2 s) ends
      down = false;
      await clock.until(() => status.values.at(-1)?.progress !== null);
      expect(clock.ms - failedAt).toBeGreaterThanOrEqual(1_990);
      expect(clock.ms - failedAt).toBeLessThanOrEqual(2_100);
      await clock.until(() => status.values.at(-1)?.lastSyncedAt.coupons !== null);
      expect(status.values.at(-1)).toMatchObject({ online: true, lastError: null });
      const coupons = record(lookup.coupons());
      await clock.until(() => coupons.values.length > 0);
      expect(coupons.values[0]?.data).toHaveLength(api.data.coupons.length);
      status.stop();
      coupons.stop();
    } finally {
      vi.useRealTimers();
      await lookup.close();
    }
  });
});
