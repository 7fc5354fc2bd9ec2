// Guessing is bounded: every request the door refuses (401, 403; in a hub also an unknown shop) is counted against
// its client, and a client past its bound gets 429 with Retry-After without `authorize` being asked at all. A
// bucket per client holds `refusedPerMinute` refusals and refills at that rate, so a till that mistypes its sign-in a
// few times is not locked out, and one address trying tokens gets about one try every few seconds. An admitted
// request of a client past its bound is answered 429 too: a right guess looks like a wrong one once the bound is
// reached. This is the count of one process; store/redis/redisRefusals.ts is the same bound shared through Redis.

export interface RefusalBounds {
  /** Seconds this client must wait before it is heard again (0: now), as this process knows it: no round trip. */
  blocked(clientId: string): number;
  /** Counts one refusal; resolves with the seconds to wait when that refusal was past the bound, else 0. */
  refused(clientId: string): Promise<number>;
  /** For an admitted request: seconds to wait when its client is past the bound (counted anywhere), else 0. */
  admitted(clientId: string): Promise<number>;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Clients tracked at most; past it, those with a full bucket are forgotten, then the oldest. */
const MAX_CLIENTS = 10_000;

/** Bounds that never refuse (clientLimits: false, or a hub's shop: the hub counts before the shop is opened). */
export const NO_REFUSAL_BOUNDS: RefusalBounds = { blocked: () => 0, refused: async () => 0, admitted: async () => 0 };

/**
 * @param perMinute refusals a client may draw per minute (and at once); false: no bound.
 * @example const guesses = createRefusalBounds(10); if (guesses.blocked(ip) > 0) answer429();
 */
export function createRefusalBounds(perMinute: number | false, now: () => number = Date.now): RefusalBounds {
  if (perMinute === false) return NO_REFUSAL_BOUNDS;
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

  function blocked(clientId: string): number {
    const b = buckets.get(clientId);
    if (!b || fill(b).tokens >= 1) return 0;
    return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
  }

  return {
    blocked,
    async refused(clientId) {
      let b = buckets.get(clientId);
      if (!b) {
        if (buckets.size >= MAX_CLIENTS) sweep();
        buckets.set(clientId, (b = { tokens: capacity, at: now() }));
      }
      // refusals that were let in at once (authorize is async) and found the bucket empty are past the bound
      const past = blocked(clientId);
      b.tokens = Math.max(0, b.tokens - 1);
      return past;
    },
    admitted: async (clientId) => blocked(clientId),
  };
}
