// Sliding one-second windows per credential key, as the real API limits per shop (shared by all its tokens).

/** Which limit a request counts against: list calls (1/s by default) or everything else (5/s). */
type RateKind = 'list' | 'other';

/** Bucket for requests without a valid token: all of them share it. */
export const ANONYMOUS_BUCKET = '\u0000anonymous';

export interface RateLimiter {
  /** Counts the request and returns true, or returns false (throttled) without counting it. */
  take(bucket: string, kind: RateKind): boolean;
}

export interface RateLimitOptions {
  limits: false | { list?: number; other?: number } | undefined;
  /** Read on every call so fake timers (vi.useFakeTimers) move the window too. */
  now?: () => number;
}

const WINDOW_MS = 1000;

/**
 * Creates the limiter; `limits: false` lets everything through.
 * @example const limiter = createRateLimiter({ limits: { list: 1, other: 5 } }); limiter.take('demo-key', 'list');
 */
export function createRateLimiter({ limits, now = () => Date.now() }: RateLimitOptions): RateLimiter {
  const max = {
    list: limits === false ? Infinity : (limits?.list ?? 1),
    other: limits === false ? Infinity : (limits?.other ?? 5),
  };
  // bucket + kind -> arrival times (ms) of the counted requests still inside the window, oldest first.
  const windows = new Map<string, number[]>();

  function recent(bucket: string, kind: RateKind, at: number): number[] {
    const id = `${kind}\u0000${bucket}`;
    let times = windows.get(id);
    if (!times) {
      times = [];
      windows.set(id, times);
    }
    let drop = 0;
    while (drop < times.length && (times[drop] as number) <= at - WINDOW_MS) drop++;
    if (drop > 0) times.splice(0, drop);
    return times;
  }

  return {
    take(bucket, kind) {
      if (max[kind] === Infinity) return true;
      const at = now();
      const times = recent(bucket, kind, at);
      // Throttled requests are not counted, so a client that waits Retry-After always gets through.
      if (times.length >= max[kind]) return false;
      times.push(at);
      return true;
    },
  };
}
