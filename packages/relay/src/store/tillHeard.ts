// When the relay last heard from a till, and what that bounds: a use's `at` is the till's claim, and a till the relay
// has been hearing from cannot have accepted a use while it was connected without sending it at once, so its back-dated
// `at` (a clock far behind, a forged 0) is moved up to what the relay can trust. Both stores keep one per till.

/** Requests of one till further apart than this: it was away between them (the engine re-polls every ≤ 25 s). */
const HEARD_GAP_MS = 120_000;
/** A till's first moments back after being away: what it accepted while away arrives now, with its own times. */
const FLUSH_GRACE_MS = 30_000;

/** What the relay heard of one till (its feed requests, its uses, claims and releases), by the relay's clock. */
export interface TillHeard {
  /** The last time. */
  heard: number;
  /** When its current run of requests (none further apart than HEARD_GAP_MS) began. */
  since: number;
  /** The last time before that run began; null: the relay heard nothing of it before (since its store began). */
  before: number | null;
}

/**
 * The earliest `at` the relay takes from a till for a use received at `receivedAt`, by what it heard of the till
 * before: nothing (a till new to this store: its own word), away since it was last heard (not before then), back
 * less than FLUSH_GRACE_MS ago (not before it was last heard before going away), or connected for longer (now: a use
 * it accepted while connected it would have sent at once). null: no bound.
 * @example earliestAt({ heard: 9_000, since: 0, before: null }, 60_000) // 60000 (connected since 0)
 */
export function earliestAt(heard: TillHeard | null | undefined, receivedAt: number): number | null {
  if (!heard) return null;
  if (receivedAt - heard.heard > HEARD_GAP_MS) return heard.heard;
  if (receivedAt - heard.since <= FLUSH_GRACE_MS) return heard.before;
  return receivedAt;
}

/**
 * What the relay heard of a till after one more request at `at` (an older `at`, a write that lost a race, changes
 * nothing).
 * @example heardAt(null, 5_000) // { heard: 5000, since: 5000, before: null }
 */
export function heardAt(heard: TillHeard | null | undefined, at: number): TillHeard {
  if (!heard) return { heard: at, since: at, before: null };
  if (at <= heard.heard) return heard;
  if (at - heard.heard > HEARD_GAP_MS) return { heard: at, since: at, before: heard.heard };
  return { ...heard, heard: at };
}
