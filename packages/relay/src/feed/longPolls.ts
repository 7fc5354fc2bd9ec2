// Parked long-polls: each waits until the mirror changes in a way it cares about, its wait ends, or the relay
// closes, whichever comes first. None outlives its wait or close().

export interface LongPolls {
  /** Resolves true when `ready()` became true after a change, false when the wait ended, `signal` fired (the client
   * left) or the relay closed. */
  wait(ready: () => boolean, ms: number, signal?: AbortSignal): Promise<boolean>;
  /** Re-checks every parked poll (the mirror changed). */
  changed(): void;
  /** How many are parked (status, tests). */
  size(): number;
  /** Whether the cap is reached: one more would be refused (503), not parked. */
  full(): boolean;
  /** Ends every parked poll now (false). */
  close(): void;
}

/**
 * @example const polls = createLongPolls(5_000); mirror.onChange(() => polls.changed()); await polls.wait(() =>
 * moved(), 30_000);
 */
export function createLongPolls(max = Infinity): LongPolls {
  const parked = new Set<{ ready: () => boolean; end: (moved: boolean) => void }>();
  let closed = false;
  return {
    wait(ready, ms, signal) {
      if (closed || ms <= 0 || signal?.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const entry = {
          ready,
          end: (moved: boolean) => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            parked.delete(entry);
            resolve(moved);
          },
        };
        const onAbort = (): void => entry.end(false);
        const timer = setTimeout(onAbort, ms);
        signal?.addEventListener('abort', onAbort, { once: true });
        parked.add(entry);
      });
    },
    changed() {
      for (const entry of [...parked]) if (entry.ready()) entry.end(true);
    },
    size: () => parked.size,
    full: () => parked.size >= max,
    close() {
      closed = true;
      for (const entry of [...parked]) entry.end(false);
    },
  };
}
