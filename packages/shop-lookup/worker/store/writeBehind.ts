// Writes that run behind the loop producing them: items queue while one transaction is under way and all go into
// the next one, so a slow disk means fewer, larger transactions instead of a stalled network (waiting for a fuller
// batch would leave the disk idle; capping batches at a page or two slows a large sync: docs/performance.md).
// When each transaction costs more than its items (a re-sync whose pages are unchanged), a batch may instead wait
// for `minBatch` items, but never longer than `quietMs` after the last item came: what arrived is stored soon
// also when the producer stalls. The queue is bounded (memory stays a few pages, whatever the listing's size); a
// failed write fails the next push or drain.

export interface WriteBehind<T> {
  /** Queues an item; waits first while `maxQueued` items are already waiting. Throws an earlier write's failure. */
  push(item: T): Promise<void>;
  /** Waits until everything queued is written; throws a write's failure. */
  drain(): Promise<void>;
}

export interface WriteBehindOptions {
  /** Items waiting beyond this make `push` wait. */
  maxQueued: number;
  /** Items a write waits for (at most maxQueued); 1: each write takes whatever is queued once the last is done. */
  minBatch?: number;
  /** A smaller batch goes anyway once no item came for this long (ms). */
  quietMs?: number;
  /** Timers (tests pass fake ones). */
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (id: unknown) => void;
}

/**
 * @example const w = writeBehind((batch) => storePages(db, batch), { maxQueued: 8 }); await w.push(page); await
 * w.drain();
 */
export function writeBehind<T>(write: (batch: T[]) => Promise<void>, options: WriteBehindOptions): WriteBehind<T> {
  const { maxQueued, quietMs = 25 } = options;
  const minBatch = Math.min(options.minBatch ?? 1, maxQueued);
  const setTimer = options.setTimeout ?? ((fn: () => void, ms: number) => globalThis.setTimeout(fn, ms));
  const clearTimer =
    options.clearTimeout ?? ((id: unknown) => globalThis.clearTimeout(id as ReturnType<typeof setTimeout>));
  let queue: T[] = [];
  let running: Promise<void> | null = null;
  let failure: { error: unknown } | null = null;
  // a partial batch may go: drain() under way, or the producer went quiet
  let flushing = 0;
  let quiet: unknown = null;

  function kick(): void {
    if (running || failure || queue.length === 0) return;
    if (queue.length < minBatch && flushing === 0) {
      if (quiet === null) quiet = setTimer(onQuiet, quietMs);
      return;
    }
    if (quiet !== null) clearTimer(quiet);
    quiet = null;
    const batch = queue;
    queue = [];
    running = write(batch).then(
      () => {
        running = null;
        kick();
      },
      (error: unknown) => {
        failure = { error };
        running = null;
      },
    );
  }

  function onQuiet(): void {
    quiet = null;
    flushing++;
    kick();
    flushing--;
  }

  async function settle(until: () => boolean): Promise<void> {
    while (running && !until()) await running;
    if (failure) throw failure.error;
  }

  return {
    async push(item) {
      await settle(() => queue.length < maxQueued);
      queue.push(item);
      // (re)started on each item: a batch waits while items keep coming
      if (quiet !== null) clearTimer(quiet);
      quiet = null;
      kick();
    },
    async drain() {
      flushing++;
      try {
        kick();
        await settle(() => false);
      } finally {
        flushing--;
      }
    },
  };
}
