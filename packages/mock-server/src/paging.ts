// List paging as the real API does it: `offset` is a 1-based PAGE NUMBER, `limit` a page size clamped to 100.
import { applyListFault } from './faults';
import type { MockFault, WireRecord } from './types';

export interface Paging {
  page: number;
  limit: number;
}

const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;

function positiveInt(value: string | null, fallback: number): number | undefined {
  if (value === null || value === '') return fallback;
  if (!/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/**
 * Reads offset (page, default 1) and limit (default 25, above 100 clamped to 100); an error text when invalid.
 * @example parsePaging(new URLSearchParams('offset=2&limit=500')) // { page: 2, limit: 100 }
 */
export function parsePaging(query: URLSearchParams): Paging | { error: string } {
  const page = positiveInt(query.get('offset'), 1);
  if (page === undefined) return { error: 'offset must be a page number >= 1' };
  const limit = positiveInt(query.get('limit'), DEFAULT_LIMIT);
  if (limit === undefined) return { error: 'limit must be an integer >= 1' };
  return { page, limit: Math.min(limit, MAX_LIMIT) };
}

export interface ListShape {
  listShape: 'paged' | 'bare';
  dataCountAs: 'string' | 'number';
}

/**
 * The `data` of a list answer: `{ list, pagenation }` (the API's spelling), or every row as a bare array.
 * A page past the end is an empty list with the same pagenation. List faults change the rows, never the paging.
 */
export function listData(rows: WireRecord[], paging: Paging, shape: ListShape, fault?: MockFault): unknown {
  if (shape.listShape === 'bare') return applyListFault(fault, rows.slice(), () => []);
  const { page, limit } = paging;
  const pageOf = (n: number): WireRecord[] => rows.slice((n - 1) * limit, n * limit);
  return {
    list: applyListFault(fault, pageOf(page), () => pageOf(page - 1)),
    pagenation: {
      data_count: shape.dataCountAs === 'string' ? String(rows.length) : rows.length,
      current_page: page,
      total_page: Math.ceil(rows.length / limit),
      pagesize: limit,
    },
  };
}
