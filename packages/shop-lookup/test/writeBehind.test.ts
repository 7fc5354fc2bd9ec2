// The write queue behind a listing (worker/store/writeBehind.ts): batches, the smallest batch a write waits for,
// and what goes anyway when the producer stalls or drains.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeBehind } from '../worker/store/writeBehind';

/** A write that holds until released, recording each batch. */
function heldWrites() {
  const batches: number[][] = [];
  const holds: (() => void)[] = [];
  const write = (batch: number[]) =>
    new Promise<void>((resolve) => {
      batches.push(batch);
      holds.push(resolve);
    });
  return { batches, write, release: () => holds.shift()?.() };
}

describe('writeBehind', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('writes the first item at once and gathers what comes during a write into the next one', async () => {
    const w = heldWrites();
    const queue = writeBehind(w.write, { maxQueued: 8 });
    await queue.push(1);
    for (const n of [2, 3, 4]) await queue.push(n);
    expect(w.batches).toEqual([[1]]);
    w.release();
    await vi.waitFor(() => expect(w.batches).toEqual([[1], [2, 3, 4]]));
    w.release();
    await queue.drain();
  });

  it('with a smallest batch, waits for it while items keep coming', async () => {
    const w = heldWrites();
    const queue = writeBehind(w.write, { maxQueued: 8, minBatch: 3, quietMs: 25 });
    await queue.push(1);
    await vi.advanceTimersByTimeAsync(20);
    await queue.push(2);
    await vi.advanceTimersByTimeAsync(20); // 40 ms since the first, 20 since the last: still gathering
    expect(w.batches).toEqual([]);
    await queue.push(3);
    expect(w.batches).toEqual([[1, 2, 3]]);
    w.release();
    await queue.drain();
  });

  it('writes a smaller batch once no item came for quietMs, and whatever is queued when drained', async () => {
    const w = heldWrites();
    const queue = writeBehind(w.write, { maxQueued: 8, minBatch: 4, quietMs: 25 });
    await queue.push(1);
    await queue.push(2);
    await vi.advanceTimersByTimeAsync(24);
    expect(w.batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.batches).toEqual([[1, 2]]);
    w.release();
    await queue.push(3);
    const drained = queue.drain();
    await vi.waitFor(() => expect(w.batches).toEqual([[1, 2], [3]]));
    w.release();
    await drained;
  });

  it('makes push wait while maxQueued items wait, and fails the next push after a failed write', async () => {
    const w = heldWrites();
    const queue = writeBehind(w.write, { maxQueued: 2 });
    await queue.push(1); // being written
    await queue.push(2);
    await queue.push(3);
    let pushed = false;
    const fourth = queue.push(4).then(() => (pushed = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(pushed).toBe(false);
    w.release();
    await fourth;
    expect(w.batches).toEqual([[1], [2, 3]]);
    const failing = writeBehind<number>(() => Promise.reject(new Error('disk full')), { maxQueued: 2 });
    await failing.push(1);
    await expect(failing.drain()).rejects.toThrow('disk full');
    await expect(failing.push(2)).rejects.toThrow('disk full');
    w.release();
    await vi.waitFor(() => expect(w.batches).toEqual([[1], [2, 3], [4]]));
    w.release();
    await queue.drain();
  });
});
