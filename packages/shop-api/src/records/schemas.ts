// Schemas of the three record kinds, checked once, here in the worker, where records arrive from the network.
// Loose objects: every field that arrives is kept, also the ones the spec does not list. One table of fields per
// kind; `schemas` runs it with zod (which reports every issue), `readRecord` runs the same readers directly.
import * as z from 'zod/mini';
import {
  boolean,
  code,
  describe as describeValue,
  integer,
  key,
  opaqueDate,
  text,
  valueList,
  type Fail,
  type FieldReader,
} from './fieldReaders';

/**
 * The version of the record readers (the field readers, the field tables below, parseRecords). Bump it whenever a
 * change alters what a raw row becomes, or whether it is rejected: page hashes stored under another version are not
 * trusted, so the next coupon listing reads (validates and diffs) every page once, then trusts the hashes again.
 * @example if (pageHash.readers === RECORD_READERS_VERSION) skipPage();
 */
export const RECORD_READERS_VERSION = 1;

/** A field: its reader, and whether it may be missing. */
type Field = [reader: FieldReader, optional: boolean];
const optional = (reader: FieldReader): Field => [reader, true];
const required = (reader: FieldReader): Field => [reader, false];

const couponFields = {
  status: optional(text),
  apply_sale_price: optional(integer),
  apply_sale_percent: optional(integer),
  apply_sale_type_max_price: optional(integer),
  apply_sale_type_minimum_price: optional(integer),
  name: optional(text),
  type: optional(text),
  type_coupon_create_count: optional(integer),
  type_coupon_use_count: optional(integer),
  use_period: optional(opaqueDate),
  create_date: optional(opaqueDate),
  edit_date: optional(opaqueDate),
  is_duplication: optional(boolean),
  use_app: optional(boolean),
};

const fields = {
  coupon: { coupon_code: required(code), ...couponFields },
  // The issued-coupon answer carries the coupon fields (maybe without coupon_code) plus issue fields.
  issuedCoupon: {
    ...couponFields,
    coupon_code: optional(text),
    coupon_issue_code: optional(text),
    shop_order_code: optional(text),
    use_date: optional(opaqueDate),
  },
  productOption: {
    no: required(key),
    code: optional(text),
    type: optional(text),
    name: optional(text),
    value_list: required(valueList),
    is_require: optional(boolean),
  },
} satisfies Record<string, Record<string, Field>>;

export type RecordKind = keyof typeof fields;

function zodField([reader, isOptional]: Field) {
  const t = z.transform((input: unknown, ctx) => {
    const fail: Fail = (value, message) => {
      ctx.issues.push({ code: 'custom', message: `${message}, got ${describeValue(value)}`, input: value });
      return z.NEVER as never;
    };
    return reader(input, fail);
  });
  return isOptional ? z.optional(t) : t;
}

const zodShape = (kind: RecordKind) =>
  Object.fromEntries(Object.entries(fields[kind]).map(([name, field]) => [name, zodField(field as Field)]));

const couponSchema = z.looseObject(zodShape('coupon'));
const issuedCouponSchema = z.looseObject(zodShape('issuedCoupon'));
const productOptionSchema = z.looseObject(zodShape('productOption'));

export const schemas = {
  coupon: couponSchema,
  issuedCoupon: issuedCouponSchema,
  productOption: productOptionSchema,
} as const;

const FAILED = Symbol('failed');
const stop: Fail = () => {
  throw FAILED;
};

/** Each kind's fields as arrays, in the table's order: what readRecord walks. */
const walk = Object.fromEntries(
  Object.entries(fields).map(([kind, shape]) => {
    const entries = Object.entries(shape as Record<string, Field>);
    return [
      kind,
      {
        names: entries.map(([name]) => name),
        readers: entries.map(([, [reader]]) => reader),
        optional: entries.map(([, [, isOptional]]) => isOptional),
        shape: shape as Record<string, Field>,
      },
    ];
  }),
) as Record<RecordKind, { names: string[]; readers: FieldReader[]; optional: boolean[]; shape: Record<string, Field> }>;

/**
 * Whether `raw`'s fields come as readRecord writes them: the table's first, in its order (none left undefined), then
 * the others.
 */
function inTableOrder(names: readonly string[], shape: Record<string, Field>, raw: Record<string, unknown>): boolean {
  let at = 0;
  let others = false;
  for (const name in raw) {
    if (!(name in shape)) {
      others = true;
      continue;
    }
    if (others || raw[name] === undefined) return false;
    while (at < names.length && names[at] !== name) at++;
    if (at++ === names.length) return false;
  }
  return true;
}

/**
 * The record as its zod schema would make it (the same fields, values and order: known fields read, in the table's
 * order, then the others as they came), or null when any field fails: then zod reads it again to say what is wrong.
 * The common path, without zod's allocations (a third of all a 100,000-coupon sync allocated). A record every reader
 * leaves as it is, its fields already in that order (a relay's feed sends them so), is that very object, not a copy.
 */
export function readRecord(kind: RecordKind, raw: Record<string, unknown>): Record<string, unknown> | null {
  const { names, readers, optional, shape } = walk[kind];
  const values: unknown[] = new Array(names.length);
  let same = true;
  try {
    for (let i = 0; i < names.length; i++) {
      const input = raw[names[i]!];
      if (optional[i] && input === undefined) continue;
      const value = readers[i]!(input, stop);
      values[i] = value;
      if (value !== input) same = false;
    }
  } catch (error) {
    if (error === FAILED) return null;
    throw error;
  }
  if (same && inTableOrder(names, shape, raw)) return raw;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) if (values[i] !== undefined) out[names[i]!] = values[i];
  for (const name in raw) if (!(name in shape)) out[name] = raw[name];
  return out;
}
