// A small seeded PRNG and the date formats the generated data uses, so the same seed always gives the same data.

export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** `length` characters from `alphabet`. */
  chars(length: number, alphabet?: string): string;
}

/** Letters and digits without 0/O/1/I, so generated codes never collide with the fixed special codes. */
const CODE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';

/**
 * mulberry32: 32-bit state, fast and well mixed enough for test data.
 * @example const rng = createRng(1); rng.int(1, 6);
 */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T,
    chars(length, alphabet = CODE_ALPHABET) {
      let out = '';
      for (let i = 0; i < length; i++) out += alphabet[int(0, alphabet.length - 1)];
      return out;
    },
  };
}

const DAY_MS = 86_400_000;
const KST_OFFSET_MS = 9 * 3_600_000;

/** A wall-clock time in Korea, as ms since 1970 of that wall clock read as UTC (so getUTC* gives KST fields). */
export type KstMs = number;

/** KST wall clock for a date and time. */
export function kst(year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0): KstMs {
  return Date.UTC(year, month - 1, day, hours, minutes, seconds);
}

/** A random KST instant between two instants, on a whole second. */
export function randomKst(rng: Rng, from: KstMs, to: KstMs): KstMs {
  return from + Math.floor(rng.next() * ((to - from) / 1000)) * 1000;
}

/** A random whole day between two instants, at 00:00:00. */
export function randomDay(rng: Rng, from: KstMs, to: KstMs): KstMs {
  return from + rng.int(0, Math.floor((to - from) / DAY_MS)) * DAY_MS;
}

export const ONE_DAY_MS = DAY_MS;

const PAD = Array.from({ length: 60 }, (_, n) => (n < 10 ? `0${n}` : String(n)));

// Formatting dominated generating 100,000 coupons, in CPU and even more in garbage: so dates are built by
// arithmetic (no Date objects) from cached day and time parts, shared between records.
const dayParts = new Map<number, string>();
const timeParts: (string | undefined)[] = [];

/** 'YYYY-MM-DD ' or 'YYYY/MM/DD ' for a day count since 1970 (Howard Hinnant's civil_from_days). */
function dayPart(days: number, sep: '-' | '/'): string {
  const key = sep === '-' ? days : -days - 1;
  const cached = dayParts.get(key);
  if (cached !== undefined) return cached;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const part = `${year}${sep}${PAD[month]}${sep}${PAD[doy - Math.floor((153 * mp + 2) / 5) + 1]} `;
  dayParts.set(key, part);
  return part;
}

/** 'HH:mm:ss' (or 'HH:mm' when withSeconds is false) for a second of the day. */
function timePart(second: number, withSeconds: boolean): string {
  const key = withSeconds ? second : 86_400 + Math.floor(second / 60);
  let part = timeParts[key];
  if (part === undefined) {
    const hm = `${PAD[Math.floor(second / 3600)]}:${PAD[Math.floor(second / 60) % 60]}`;
    part = withSeconds ? `${hm}:${PAD[second % 60]}` : hm;
    timeParts[key] = part;
  }
  return part;
}

/** 'YYYY-MM-DD HH:mm:ss', the format of create_date / edit_date. */
export function formatDash(at: KstMs): string {
  const days = Math.floor(at / DAY_MS);
  return dayPart(days, '-') + timePart(Math.floor((at - days * DAY_MS) / 1000), true);
}

/** 'YYYY/MM/DD HH:mm', the admin's format. */
export function formatSlash(at: KstMs): string {
  const days = Math.floor(at / DAY_MS);
  return dayPart(days, '/') + timePart(Math.floor((at - days * DAY_MS) / 1000), false);
}

/** Unix seconds of a KST wall-clock instant, as other endpoints of the API send them. */
export function formatUnix(at: KstMs): string {
  return String(Math.floor((at - KST_OFFSET_MS) / 1000));
}
