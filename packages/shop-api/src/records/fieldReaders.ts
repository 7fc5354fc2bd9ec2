// Lenient readers for the field types of the spec. The real API is loose about types (see
// shared/spec/imweb-wire-format.md): an Integer may arrive as "15000", a Boolean as "Y"/"N" or 1/0. Each reader
// accepts every form we have seen, normalises it, and calls `fail` with what is wrong for anything else (so the
// record is rejected and reported, never guessed). The readers are plain functions: schemas.ts runs them as zod
// transforms, and parseRecords.ts runs them directly on the common path (no failure, nothing for zod to report).
// A change to what a reader makes of a value must bump RECORD_READERS_VERSION (schemas.ts).

/** Says what is wrong with `input` and ends the read (a zod issue, or the end of the fast path). */
export type Fail = (input: unknown, message: string) => never;
export type FieldReader<T = unknown> = (input: unknown, fail: Fail) => T;

/** A short, safe rendering of a bad value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

const NUMERIC = /^\s*-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*$/;

/** Integer (spec) → number. `"15000"`, `"15,000"` → 15000; `""`/null → null. */
export const integer: FieldReader<number | null> = (input, fail) => {
  if (input === null || input === '') return null;
  if (typeof input === 'number' && Number.isFinite(input)) return input;
  if (typeof input === 'string' && NUMERIC.test(input)) return Number(input.replace(/,/g, ''));
  return fail(input, 'expected an integer');
};

/** An integer that identifies something (option `no`, product number): required, whole. */
export const key: FieldReader<number> = (input, fail) => {
  const n = typeof input === 'string' && /^\s*\d+\s*$/.test(input) ? Number(input) : input;
  if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
  return fail(input, 'expected a whole number');
};

const TRUE = new Set(['y', 'yes', 'true', '1', 't']);
const FALSE = new Set(['n', 'no', 'false', '0', 'f']);

/** Boolean (spec) → boolean. true/false, "Y"/"N", 1/0, "true"/"false"; `""`/null → null. */
export const boolean: FieldReader<boolean | null> = (input, fail) => {
  if (input === null || input === '') return null;
  if (typeof input === 'boolean') return input;
  if (input === 1 || input === 0) return input === 1;
  if (typeof input === 'string') {
    const s = input.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
  }
  return fail(input, 'expected a boolean (true/false, Y/N or 1/0)');
};

/** String (spec) → string. A number becomes its decimal text (codes that look like numbers). */
export const text: FieldReader<string | null> = (input, fail) => {
  if (input === null || typeof input === 'string') return input;
  if (typeof input === 'number' && Number.isFinite(input)) return String(input);
  return fail(input, 'expected a string');
};

/** A required, non-empty string key (coupon_code). */
export const code: FieldReader<string> = (input, fail) => {
  if (typeof input === 'string' && input !== '') return input;
  if (typeof input === 'number' && Number.isFinite(input)) return String(input);
  return fail(input, 'expected a non-empty code');
};

/**
 * A date or period: kept exactly as received (string or unix-seconds number); parsed only where a decision needs it.
 */
export const opaqueDate: FieldReader<string | number | null> = (input, fail) => {
  if (input === null || typeof input === 'string' || (typeof input === 'number' && Number.isFinite(input))) {
    return input;
  }
  return fail(input, 'expected a date string or unix seconds');
};

type OptionValueRecord = { code: string; name?: string | null; [k: string]: unknown };

/**
 * `value_list` in any shape that arrives → one array form. An array of `{code, name}`; an object keyed by value
 * code (`{"C01": {"name": "블랙"}}` or `{"C01": "블랙"}`); missing, `{}`, `[]` or null (input options) → [].
 */
export const valueList: FieldReader<OptionValueRecord[]> = (input, fail) => {
  if (input === null || input === undefined || input === '') return [];
  if (typeof input !== 'object') return fail(input, 'expected a list of option values');
  const entries: [string | undefined, unknown][] = Array.isArray(input)
    ? input.map((v) => [undefined, v])
    : Object.entries(input as Record<string, unknown>);
  const out: OptionValueRecord[] = [];
  for (const [index, [keyCode, raw]] of entries.entries()) {
    const where = `value_list[${keyCode === undefined ? index : JSON.stringify(keyCode)}]`;
    let fields: Record<string, unknown>;
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) fields = raw as Record<string, unknown>;
    else if (typeof raw === 'string' && keyCode !== undefined) fields = { name: raw };
    else return fail(raw, `${where}: expected an option value`);
    const valueCode = fields.code ?? keyCode;
    if (typeof valueCode !== 'string' && typeof valueCode !== 'number') {
      return fail(raw, `${where}: expected a value code`);
    }
    out.push({ ...fields, code: String(valueCode) });
  }
  return out;
};
