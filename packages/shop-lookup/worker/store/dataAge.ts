// How old confirmed data is. A confirmation stamped in the future was stamped by a clock that was ahead then (and
// has been corrected since): its age cannot be told, so it counts as old, never as fresh.

/** A stamp up to this far ahead of now is a small difference between clocks (tabs, the API's): age 0. */
const FUTURE_STAMP_TOLERANCE_MS = 60_000;

/**
 * The age of data confirmed at `confirmedAt`, at `now`, ms: null when never confirmed, Infinity when the stamp is
 * further in the future than FUTURE_STAMP_TOLERANCE_MS.
 * @example dataAge(Date.now() - 3_600_000, Date.now()) // 3600000
 */
export function dataAge(confirmedAt: number | null | undefined, now: number): number | null {
  if (confirmedAt === null || confirmedAt === undefined) return null;
  const age = now - confirmedAt;
  if (age >= 0) return age;
  return -age <= FUTURE_STAMP_TOLERANCE_MS ? 0 : Number.POSITIVE_INFINITY;
}

/**
 * Whether data confirmed at `confirmedAt` is older than `maxAgeMs` at `now` (never confirmed, or stamped in the
 * future, counts as older). @example if (olderThan(local.syncedAt, now, refreshIntervalMs)) refresh();
 */
export function olderThan(confirmedAt: number | null | undefined, now: number, maxAgeMs: number): boolean {
  const age = dataAge(confirmedAt, now);
  return age === null || age > maxAgeMs;
}
