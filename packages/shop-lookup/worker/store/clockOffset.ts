// The till's last measured clock offset, kept beside the data (meta '@clock'): after a restart with no answer of
// the API yet (offline), the engine starts from it instead of the till's bare clock (serverClock.ts).
import { metaKey, type ClockOffsetRow, type ShopDatabase } from './store';

/** A stored offset is ignored when, applied now, it would put the API's time this far before its measurement. */
const BACKWARDS_TOLERANCE_MS = 60_000;

/**
 * The stored offset, unless there is none or it cannot be right any more: applied to the till's clock now it would
 * put the API's time before the moment it was measured (the till's clock was put right since, from ahead).
 * @example const offset = await readClockOffset(db, Date.now()); if (offset !== null) clock.seed(offset);
 */
export async function readClockOffset(db: ShopDatabase, localNow: number): Promise<number | null> {
  const row = (await db.meta.get(metaKey.clock)) as ClockOffsetRow | undefined;
  if (!row || !Number.isFinite(row.offsetMs) || !Number.isFinite(row.measuredAt)) return null;
  return localNow - row.offsetMs < row.measuredAt - BACKWARDS_TOLERANCE_MS ? null : row.offsetMs;
}

/**
 * Keeps `offsetMs`, measured at `measuredAt` (the API's time).
 * @example await writeClockOffset(db, -172_800_000, clock.now());
 */
export async function writeClockOffset(db: ShopDatabase, offsetMs: number, measuredAt: number): Promise<void> {
  await db.meta.put({ key: metaKey.clock, offsetMs, measuredAt });
}
