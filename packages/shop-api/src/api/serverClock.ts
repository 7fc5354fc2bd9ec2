// The till's clock against the shop API's: every answer's `Date` header says what time the server had when it
// answered. A till whose clock is days off would judge coupon periods and data ages wrong, so the engine's `now`
// is the till's clock corrected by the estimated offset (the relay's answers count the same way).

/** Offsets within this are the header's resolution (whole seconds) and the way there, not a wrong clock. */
const DEAD_BAND_MS = 5_000;
/** The estimate is the median of the last answers' offsets: one odd gateway clock does not move it. */
const SAMPLES = 5;
/**
 * Listeners hear of a move this large or larger (from what they were last told): the header's whole seconds make
 * the estimate jitter by up to a second from answer to answer, and telling every jitter cost a status message to
 * every tab for each page of a listing.
 */
const TELL_MS = 1_000;

export interface ServerClock {
  /** Now, epoch ms, by the server's clock as far as known (until an answer told, the till's own). */
  now(): number;
  /** How far the till's clock is ahead of the server's, ms (negative: behind); null until an answer told. */
  offsetMs(): number | null;
  /** An answer with this `Date` header just arrived (its headers, as they came in). */
  sample(dateHeader: string | null | undefined): void;
  /**
   * Starts from an offset measured before (kept beside the data: a till restarted offline); ignored once an answer
   * told the time. Listeners are told it as a first estimate.
   */
  seed(offsetMs: number): void;
  /** Told the new offset when the estimate first exists and whenever it moves by a second or more since last told. */
  subscribe(listener: (offsetMs: number) => void): () => void;
}

/**
 * @param localNow the till's clock (the platform's, or a test's)
 * @example const clock = createServerClock(Date.now); clock.sample(res.headers.get('date')); clock.now();
 */
export function createServerClock(localNow: () => number): ServerClock {
  const offsets: number[] = [];
  let estimate: number | null = null;
  let told: number | null = null;
  const listeners = new Set<(offsetMs: number) => void>();
  return {
    now() {
      const local = localNow();
      return estimate === null || Math.abs(estimate) <= DEAD_BAND_MS ? local : local - estimate;
    },
    offsetMs: () => estimate,
    sample(dateHeader) {
      const server = dateHeader ? Date.parse(dateHeader) : Number.NaN;
      if (Number.isNaN(server)) return;
      // the header is the second the answer was made: on average half a second before its end
      offsets.push(localNow() - (server + 500));
      if (offsets.length > SAMPLES) offsets.shift();
      const sorted = [...offsets].sort((a, b) => a - b);
      const next = Math.round(sorted[sorted.length >> 1]!);
      estimate = next;
      if (told !== null && Math.abs(next - told) < TELL_MS) return;
      told = next;
      for (const l of [...listeners]) l(next);
    },
    seed(offsetMs) {
      if (offsets.length === 0) for (const l of [...listeners]) l((estimate = told = offsetMs));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
