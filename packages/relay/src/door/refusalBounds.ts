// Guessing is bounded: every request the door refuses (401, 403) is counted against its client before `authorize` is
// asked again, and a client past its bound gets 429 with Retry-After without `authorize` being called at all. A
// bucket per client holds `refusedPerMinute` refusals and refills at that rate, so a till that mistypes its sign-in a
// few times is not locked out, and one address trying tokens gets about one try every few seconds.

export interface RefusalBounds {
  /** Seconds to wait when this client is past its bound (answer 429 without asking authorize), else 0. */
  wait(clientId: string): number;
  /** Counts one refused request of this client. */
  refused(clientId: string): void;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Clients tracked at most; past it, those with a full bucket are forgotten, then the oldest. */
const MAX_CLIENTS = 10_000;

/**
 * @param perMinute refusals a client may draw per minute (and at once); false: no bound.
 * @example const guesses = createRefusalBounds(10); if (guesses.wait(ip) > 0) answer429();
 */
export function createRefusalBounds(perMinute: number | false, now: () => number = Date.now): RefusalBounds {
  if (perMinute === false) return { wait: () => 0, refused: () => undefined };
  const capacity = Math.max(1, perMinute);
  const perMs = perMinute / 60_000;
  const buckets = new Map<string, Bucket>();

  function fill(b: Bucket): Bucket {
    const t = now();
    b.tokens = Math.min(capacity, b.tokens + (t - b.at) * perMs);
    b.at = t;
    return b;
  }

  function sweep(): void {
    for (const [id, b] of buckets) if (fill(b).tokens >= capacity) buckets.delete(id);
    // still full of clients that keep failing: forget the oldest (they start again with a full bucket)
    for (const id of buckets.keys()) {
      if (buckets.size < MAX_CLIENTS) break;
      buckets.delete(id);
    }
  }

  return {
    wait(clientId) {
      const b = buckets.get(clientId);
      if (!b || fill(b).tokens >= 1) return 0;
      return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
    },
    refused(clientId) {
      let b = buckets.get(clientId);
      if (!b) {
        if (buckets.size >= MAX_CLIENTS) sweep();
        buckets.set(clientId, (b = { tokens: capacity, at: now() }));
      }
      fill(b).tokens = Math.max(0, b.tokens - 1);
    },
  };
}
