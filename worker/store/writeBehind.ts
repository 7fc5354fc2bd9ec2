// Writes that run behind the loop producing them: items queue while one transaction is under way and all go into
// the next one, so a slow disk means fewer, larger transactions instead of a stalled network (measured: waiting for
// a fuller batch leaves the disk idle; capping batches at one or two pages made a 100,000-coupon sync 30 % slower).
// The queue is bounded (memory stays a few pages, whatever the listing's size); a failed write fails the next push
// or drain.

export interface WriteBehind<T> {
  /** Queues an item; waits first while `maxQueued` items are already waiting. Throws an earlier write's failure. */
  push(item: T): Promise<void>;
  /** Waits until everything queued is written; throws a write's failure. */
  drain(): Promise<void>;
}

/** @example const w = writeBehind((batch) => storePages(db, batch), 8); await w.push(page); await w.drain(); */
export function writeBehind<T>(write: (batch: T[]) => Promise<void>, maxQueued: number): WriteBehind<T> {
  let queue: T[] = [];
  let running: Promise<void> | null = null;
  let failure: { error: unknown } | null = null;

  function kick(): void {
    if (running || failure || queue.length === 0) return;
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

  async function settle(until: () => boolean): Promise<void> {
    while (running && !until()) await running;
    if (failure) throw failure.error;
  }

  return {
    async push(item) {
      await settle(() => queue.length < maxQueued);
      queue.push(item);
      kick();
    },
    drain: () => settle(() => false),
  };
}
