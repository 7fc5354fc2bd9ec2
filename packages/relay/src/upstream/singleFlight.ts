// Identical requests at once become one: the first starts the work, the others share its promise; the result is
// kept briefly (when `keep` says it is worth keeping), so a burst from many tills is one upstream call.

export interface SingleFlight<T> {
  run(key: string, work: () => Promise<T>, keep: (result: T) => boolean): Promise<T>;
  /** Calls started upstream so far (tests, status). */
  started(): number;
}

/** Entries beyond this are swept of expired ones on the next call. */
const SWEEP_AT = 500;

/** @example const flights = createSingleFlight<Answer>(2_000); await flights.run(url, () => forward(url), (a) => a.status < 500); */
export function createSingleFlight<T>(keepMs: number, now: () => number = Date.now): SingleFlight<T> {
  const entries = new Map<string, { promise: Promise<T>; until: number | null }>();
  let started = 0;
  return {
    run(key, work, keep) {
      const t = now();
      if (entries.size >= SWEEP_AT) {
        for (const [k, e] of entries) if (e.until !== null && e.until <= t) entries.delete(k);
      }
      const found = entries.get(key);
      if (found && (found.until === null || found.until > t)) return found.promise;
      started++;
      const entry: { promise: Promise<T>; until: number | null } = { promise: work(), until: null };
      entries.set(key, entry);
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
