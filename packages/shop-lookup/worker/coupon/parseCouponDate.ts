// One date of a coupon period, in the formats the real API may send ("Formats of use_period, create_date and
// edit_date: not shown"). Tolerant of the variants seen, strict about everything else: a value it cannot read is
// reported as unreadable, never guessed.
import { zonedToUtc } from './shopTime';

/**
 * A readable date: the instant it starts at and the instant its stated precision ends at (exclusive). A date-only
 * value covers its whole day, `HH:mm` its whole minute, `HH:mm:ss` and unix seconds their whole second.
 */
export interface CouponDate {
  from: number;
  /** Exclusive: the first instant after the stated day/minute/second. */
  until: number;
}

const DATE =
  /^(\d{4})([-/.])(\d{1,2})\2(\d{1,2})(?:(?:\s+|T)(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(Z|[+-]\d{2}:?\d{2})?)?$/i;
/** Unix seconds from 1973-03-03 to 2286-11-20: 9 or 10 digits. Longer (ms) or shorter (YYYYMMDD) is unreadable. */
const UNIX = /^\d{9,10}$/;

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Reads unix seconds (number or digit string), `YYYY-MM-DD`, `YYYY-MM-DD HH:mm[:ss]` with `-`, `/` or `.` between
 * the date parts, an optional `T` and an optional offset (`Z`, `+09:00`). Naive times are in `timeZone`.
 * Returns null for anything else, including impossible dates (2026-02-30, 24:00).
 * @example parseCouponDate('2026/05/31 23:59', 'Asia/Seoul') // { from: …14:59:00Z, until: …15:00:00Z }
 */
export function parseCouponDate(value: unknown, timeZone: string): CouponDate | null {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && UNIX.test(String(value))
      ? { from: value * 1000, until: value * 1000 + 1000 }
      : null;
  }
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (UNIX.test(text)) return parseCouponDate(Number(text), timeZone);
  const m = DATE.exec(text);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[3]), Number(m[4])];
  const hasTime = m[5] !== undefined;
  const [hour, minute, second] = [Number(m[5] ?? 0), Number(m[6] ?? 0), Number(m[7] ?? 0)];
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  const step = !hasTime ? 0 : m[7] === undefined ? 60_000 : 1000;
  const offset = m[8];
  if (offset !== undefined) {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.toUpperCase() === 'Z' ? '0000' : offset.slice(1).replace(':', '');
    const offsetMs = sign * (Number(digits.slice(0, 2)) * 3_600_000 + Number(digits.slice(2)) * 60_000);
    return { from: wall - offsetMs, until: wall - offsetMs + step };
  }
  const from = zonedToUtc(wall, timeZone);
  if (step > 0) return { from, until: from + step };
  // a whole day ends at the next midnight of the shop's clock (23 or 25 hours on a DST day)
  return { from, until: zonedToUtc(wall + 86_400_000, timeZone) };
}
