// `use_period` as a range of instants ("Formats of use_period: not shown"). Seen: '' (no limit), 'unlimited',
// '2026-01-01 00:00:00 ~ 2027-12-31 23:59:59', '2026/03/01 00:00 ~ 2027/05/31 23:59', '1767193200 ~ 1830265199'.
import { parseCouponDate } from './parseCouponDate';

/** A period: `from` inclusive, `until` exclusive, each null when open. */
export type Period =
  | { kind: 'always' }
  | { kind: 'range'; from: number | null; until: number | null }
  | { kind: 'unreadable' };

const UNLIMITED = new Set(['', 'unlimited', '무제한']);

/**
 * Reads a period. Missing, null, '' and 'unlimited'/'무제한' mean no limit. A range is two dates around `~`
 * (or the full-width `～`), spaces optional; an empty side is an open bound ('2026-01-01 ~'). The end date is
 * inclusive to its stated precision: '~ 2026-12-31' includes all of that day, '~ 23:59' all of that minute.
 * A single date, an end before the start or an unreadable side is `unreadable`.
 * @example parsePeriod('2026-01-01 ~ 2026-12-31', 'Asia/Seoul') // { kind: 'range', from, until }
 */
export function parsePeriod(value: unknown, timeZone: string): Period {
  if (value === undefined || value === null) return { kind: 'always' };
  if (typeof value !== 'string') return { kind: 'unreadable' };
  const text = value.trim();
  if (UNLIMITED.has(text.toLowerCase())) return { kind: 'always' };
  const sides = text.split(/[~～]/);
  if (sides.length !== 2) return { kind: 'unreadable' };
  const [startText, endText] = sides.map((s) => s.trim()) as [string, string];
  if (startText === '' && endText === '') return { kind: 'unreadable' };
  const start = startText === '' ? null : parseCouponDate(startText, timeZone);
  const end = endText === '' ? null : parseCouponDate(endText, timeZone);
  if ((startText !== '' && !start) || (endText !== '' && !end)) return { kind: 'unreadable' };
  if (start && end && end.until <= start.from) return { kind: 'unreadable' };
  return { kind: 'range', from: start?.from ?? null, until: end?.until ?? null };
}
