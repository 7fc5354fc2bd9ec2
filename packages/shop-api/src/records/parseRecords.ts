// Validation at the network boundary: raw rows in, good records and reported rejections out.
// A bad record never stops its page-mates from being stored.
import * as z from 'zod/mini';
import type { Coupon, IssuedCoupon, LookupError, ProductOption, RecordIssue } from '../types';
import { describe } from './fieldReaders';
import { readRecord, schemas, type RecordKind } from './schemas';
import { pathText } from './pathText';

interface RecordOf {
  coupon: Coupon;
  issuedCoupon: IssuedCoupon;
  productOption: ProductOption;
}

/** A record that failed its schema: where it was, its key when readable, and why. */
export interface RejectedRecord {
  kind: RecordKind;
  /** The record's key if it could be read (coupon_code, option no, ...), so a good local copy is kept. */
  key: string | number | null;
  issues: RecordIssue[];
}

export interface ParsedRecords<T> {
  records: T[];
  rejected: RejectedRecord[];
}

function readableKey(kind: RecordKind, raw: unknown): string | number | null {
  if (raw === null || typeof raw !== 'object') return null;
  const r = raw as Record<string, unknown>;
  const k = kind === 'coupon' ? r.coupon_code : kind === 'productOption' ? r.no : r.coupon_issue_code;
  return typeof k === 'string' || typeof k === 'number' ? k : null;
}

/**
 * Checks one raw record. `path` says where it was (made only when it fails: a function then). `productNo` is added
 * to options (the API's option rows do not carry it).
 * @example parseRecord('coupon', row, 'data.list[3]')
 */
export function parseRecord<K extends RecordKind>(
  kind: K,
  raw: unknown,
  path: string | (() => string),
  productNo?: number,
): { ok: true; record: RecordOf[K] } | { ok: false; rejected: RejectedRecord } {
  const where = () => (typeof path === 'string' ? path : path());
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    const issues = [{ path: where(), message: `expected a ${kind} object, got ${describe(raw)}` }];
    return { ok: false, rejected: { kind, key: null, issues } };
  }
  // zod only for a record that fails somewhere: it says where and why
  let data: object | null = readRecord(kind, raw as Record<string, unknown>);
  if (data === null) {
    const result = z.safeParse(schemas[kind], raw);
    if (!result.success) {
      const base = where();
      const issues = result.error.issues.map((i) => ({ path: pathText(i.path, base), message: i.message }));
      return { ok: false, rejected: { kind, key: readableKey(kind, raw), issues } };
    }
    data = result.data as object;
  }
  const record = (productNo === undefined ? data : { ...data, product_no: productNo }) as RecordOf[K];
  return { ok: true, record };
}

/** Checks the rows of one page; `basePath` names where they were (e.g. `data.list`). */
export function parseRecords<K extends RecordKind>(
  kind: K,
  rows: readonly unknown[],
  basePath: string,
  productNo?: number,
): ParsedRecords<RecordOf[K]> {
  const out: ParsedRecords<RecordOf[K]> = { records: [], rejected: [] };
  rows.forEach((raw, i) => {
    const r = parseRecord(kind, raw, () => `${basePath}[${i}]`, productNo);
    if (r.ok) out.records.push(r.record);
    else out.rejected.push(r.rejected);
  });
  return out;
}

/** A rejected record as a reportable error, in words. */
export function rejectionError(where: string, rejected: RejectedRecord): LookupError {
  const what = rejected.key === null ? `a ${rejected.kind} record` : `${rejected.kind} ${JSON.stringify(rejected.key)}`;
  const why = rejected.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return {
    code: 'invalid_record',
    message: `${where}: ${what} was rejected and not stored (${why}). The last good copy, if any, is kept.`,
    issues: rejected.issues,
  };
}
