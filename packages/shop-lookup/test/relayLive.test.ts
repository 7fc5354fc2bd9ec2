// The live long-poll's life (worker/relayLive.ts), driven by explicit events: leadership, connectivity, the poll's
// own answers; fake timers for the backoff. What it applies is tested against the real relay (tillsOnRelay.test.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConnectivity } from '../worker/tabs/connectivity';
import type { PollOutcome } from '../worker/sync/relay/relayFeedSource';
import { startRelayLive } from '../worker/sync/relay/relayLive';
import { fakeLeadership } from './utils';

/** A poll the test answers by hand; each call is kept with its signal. */
function handPoll() {
  const calls: { signal: AbortSignal; answer(o: PollOutcome): void; fail(e: unknown): void }[] = [];
  const poll = (_waitS: number, signal: AbortSignal) =>
    new Promise<PollOutcome>((resolve, reject) => {
      calls.push({ signal, answer: resolve, fail: reject });
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  return { poll, calls };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('the live long-poll', () => {
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const s of stops.splice(0)) s();
    vi.useRealTimers();
  });

  function start(over: Partial<Parameters<typeof startRelayLive>[0]> = {}) {
    const { poll, calls } = handPoll();
    const connectivity = createConnectivity({ navigator: { onLine: true } });
    const leadership = fakeLeadership(true);
    const closing = new AbortController();
    const resync = vi.fn(async () => true);
    const live = startRelayLive({
      poll,
      isRelay: () => true,
      resync,
      leadership,
      connectivity,
      onChange: () => () => undefined,
      signal: closing.signal,
      backoffMinMs: 1000,
      ...over,
    });
    stops.push(() => live.dispose());
    return { calls, connectivity, leadership, closing, resync, live };
  }

  it('keeps one poll open while leading and online, ends it when offline or no longer leading, and resumes after', async () => {
    const { calls, connectivity, leadership } = start();
    await settle();
    expect(calls).toHaveLength(1);
    calls[0]!.answer('unchanged'); // a 304 after the wait: at once the next poll
    await settle();
    expect(calls).toHaveLength(2);

    connectivity.reportUnreachable();
    expect(calls[1]!.signal.aborted).toBe(true);
    await settle();
    expect(calls).toHaveLength(2); // rests while offline
    connectivity.reportAnswer();
    await settle();
    expect(calls).toHaveLength(3);

    leadership.set(false);
    expect(calls[2]!.signal.aborted).toBe(true);
    await settle();
    expect(calls).toHaveLength(3);
    leadership.set(true);
    await settle();
    expect(calls).toHaveLength(4);
  });

  it('runs a full sync when the feed asks to start again or has more waiting', async () => {
    const { calls, resync } = start();
    await settle();
    calls[0]!.answer('resync');
    await settle();
    expect(resync).toHaveBeenCalledTimes(1);
    expect(calls).toHaveLength(2);
  });

  it('runs a full sync when a round fails, so status() tells why (a full storage, a bad answer), then backs off', async () => {
    vi.useFakeTimers();
    const { calls, resync } = start();
    await vi.advanceTimersByTimeAsync(0);
    calls[0]!.fail(Object.assign(new Error('QuotaExceededError'), { name: 'QuotaExceededError' }));
    await vi.advanceTimersByTimeAsync(0);
    expect(resync).toHaveBeenCalledTimes(1);
    expect(calls).toHaveLength(1); // the next round waits for the backoff
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toHaveLength(2);
  });

  it('backs off on errors, each time longer, and stops on close', async () => {
    vi.useFakeTimers();
    const { calls, closing } = start();
    await vi.advanceTimersByTimeAsync(0);
    calls[0]!.fail(Object.assign(new Error('bad answer'), { code: 'bad_response' }));
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    calls[1]!.fail(Object.assign(new Error('bad answer'), { code: 'bad_response' }));
    await vi.advanceTimersByTimeAsync(1999);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(3);

    closing.abort(new Error('closed'));
    expect(calls[2]!.signal.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls).toHaveLength(3);
  });
});
