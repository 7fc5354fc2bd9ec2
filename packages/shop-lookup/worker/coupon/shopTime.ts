// Wall-clock time in the shop's time zone, with Intl alone (no time-zone library): naive dates in coupon periods
// ("2026-05-01 10:00") are the shop's local time, and cashier messages show times the same way.
import { ShopLookupError } from '../../src/protocol';

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/**
 * Throws `bad_options` unless the platform knows `timeZone` (an IANA name such as 'Asia/Seoul').
 * @example assertTimeZone('Europe/Berlin');
 */
export function assertTimeZone(timeZone: unknown): asserts timeZone is string {
  try {
    if (typeof timeZone !== 'string' || timeZone === '') throw new RangeError('empty');
    formatter(timeZone);
  } catch {
    throw new ShopLookupError(
      'bad_options',
      `timeZone ${JSON.stringify(timeZone)} is not a time zone this platform knows (use an IANA name such as 'Asia/Seoul').`,
    );
  }
}

/** The wall-clock fields at instant `ms` in `timeZone`, read back as if they were UTC (ms, whole seconds). */
function wallAt(ms: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(ms))) p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
}

/** The zone's offset from UTC at instant `ms`, in ms (Seoul: +9 h). */
function offsetAt(ms: number, timeZone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return wallAt(whole, timeZone) - whole;
}

/**
 * The instant at which the shop's clocks show `wall` (wall-clock fields given as a UTC timestamp).
 * A wall time that occurs twice (DST ends) means its first occurrence; one that does not exist (DST starts)
 * is read with the offset in force before the change, so New York's 02:30 on the spring-forward day is 03:30 EDT.
 * @example zonedToUtc(Date.UTC(2026, 0, 1), 'Asia/Seoul') // Date.UTC(2025, 11, 31, 15)
 */
export function zonedToUtc(wall: number, timeZone: string): number {
  // no zone changes its offset twice within two days, so the offsets a day either side are the only candidates
  const before = offsetAt(wall - DAY_MS, timeZone);
  const after = offsetAt(wall + DAY_MS, timeZone);
  const candidates = [wall - before, wall - after].filter((t) => wallAt(t, timeZone) === wall);
  return candidates.length > 0 ? Math.min(...candidates) : wall - before;
}

/**
 * An instant as the shop's clock shows it: 'YYYY-MM-DD HH:mm:ss'.
 * @example formatShopTime(Date.UTC(2025, 11, 31, 14, 59, 59), 'Asia/Seoul') // '2025-12-31 23:59:59'
 */
export function formatShopTime(ms: number, timeZone: string): string {
  return new Date(wallAt(ms, timeZone)).toISOString().slice(0, 19).replace('T', ' ');
}
