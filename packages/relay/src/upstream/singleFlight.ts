// Identical requests at once become one: the first starts the work, the others share its promise; the result is
// kept briefly (when `keep` says it is worth keeping), so a burst from many tills is one upstream call. The work is
// given up (its signal aborted, and the key freed for the next caller) once every caller waiting for it has hung up:
// an abandoned request costs no upstream call that has not been sent yet.

export interface SingleFlight<T> {
  /**
   * The shared result of `work` for `key`. `gone` aborts when this caller no longer waits (its client hung up);
   * without it the caller waits to the end. `work`'s signal aborts once no caller waits any more.
   */
  run(
    key: string,
    work: (abandoned: AbortSignal) => Promise<T>,
    keep: (result: T) => boolean,
    gone?: AbortSignal,
  ): Promise<T>;
  /** Calls started upstream so far (tests, status). */
  started(): number;
}

interface Entry<T> {
  promise: Promise<T>;
  /** Until when a kept result is reused; null while the work runs. */
  until: number | null;
  /** Callers still waiting (Infinity once one that cannot hang up joined). */
  callers: number;
  abandoned: AbortController;
}

/** Entries beyond this are swept of expired ones on the next call. */
const SWEEP_AT = 500;

/**
 * @example const flights = createSingleFlight<Answer>(2_000); await flights.run(url, (abandoned) => forward(url,
 * abandoned), (a) => a.status < 500, clientGone);
 */
export function createSingleFlight<T>(keepMs: number, now: () => number = Date.now): SingleFlight<T> {
  const entries = new Map<string, Entry<T>>();
  let started = 0;

  function join(key: string, entry: Entry<T>, gone: AbortSignal | undefined): void {
    if (!gone) {
      entry.callers = Infinity;
      return;
    }
    entry.callers++;
    const leave = (): void => {
      entry.callers--;
      if (entry.callers > 0 || entry.until !== null) return;
      entry.abandoned.abort(new Error('every client waiting for this answer hung up'));
      if (entries.get(key) === entry) entries.delete(key);
    };
    if (gone.aborted) leave();
    else gone.addEventListener('abort', leave, { once: true });
  }

  return {
    run(key, work, keep, gone) {
      const t = now();
      if (entries.size >= SWEEP_AT) {
        for (const [k, e] of entries) if (e.until !== null && e.until <= t) entries.delete(k);
      }
      const found = entries.get(key);
      if (found && (found.until === null || found.until > t)) {
        if (found.until === null) join(key, found, gone);
        return found.promise;
      }
      started++;
      const abandoned = new AbortController();
      const entry: Entry<T> = { promise: work(abandoned.signal), until: null, callers: 0, abandoned };
      entries.set(key, entry);
      join(key, entry, gone);
      entry.promise.then(
        (result) => {
          if (entries.get(key) !== entry) return;
          if (keepMs > 0 && keep(result)) entry.until = now() + keepMs;
          else entries.delete(key);
        },
        () => {
          if (entries.get(key) === entry) entries.delete(key);
        },
      );
      return entry.promise;
    },
    started: () => started,
  };
}
