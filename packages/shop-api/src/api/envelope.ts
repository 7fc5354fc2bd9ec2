// The API's answer envelope: `{ msg, code, request_count, version, data }`, lists in `data.list` with paging in
// `data.pagenation` (the API's spelling), or `data` as a bare array of rows. Everything here is tolerant of the
// variants listed in shared/spec/imweb-wire-format.md and strict about what cannot be read: a list answer that
// does not say how long the list is (no paging, and no row either) cannot be told from a broken one.
import { badResponseError } from './apiError';

export interface Envelope {
  code: number;
  msg: string;
  data: unknown;
  /** The whole parsed body (the auth answer carries `access_token` at the top level). */
  body: Record<string, unknown>;
}

/** One page of a list answer. */
export interface ListPage {
  rows: unknown[];
  /** Where the rows sit in the answer, for error paths. */
  rowsPath: string;
  page: number;
  /** null when the answer had no paging info (a bare array: the whole list at once). */
  totalPages: number | null;
  dataCount: number | null;
  pageSize: number | null;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) return Number(value);
  return null;
}

/**
 * The envelope's `code` as the API may send it: a number, or the same number as text (`"-2"`, `" 200 "`).
 * The one reader of it: the engine's transport and the credential proxy must agree on what an answer said.
 * @example readApiCode('-2') // -2
 */
export function readApiCode(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number(value);
  return null;
}

/**
 * A body as a server passing answers on reads it: the parsed JSON object (undefined when it is not one: an HTML page,
 * cut-off JSON) and its envelope's code.
 * @example readAnswerBody('{"code":-7,"msg":"…"}') // { json: { code: -7, msg: '…' }, code: -7 }
 */
export function readAnswerBody(text: string): { json: Record<string, unknown> | undefined; code: number | undefined } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { json: undefined, code: undefined };
  }
  const json =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  return { json, code: readApiCode(json?.code) ?? undefined };
}

/** Parses a response body into the envelope, or throws `bad_response` saying what was wrong. */
export function readEnvelope(text: string, status: number, label: { method: string; path: string }): Envelope {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('<')) {
    throw badResponseError(label, status, 'it is an HTML page, not JSON');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const what = trimmed === '' ? 'it is empty' : `it is not complete JSON (${text.length} bytes, cut off or garbled)`;
    throw badResponseError(label, status, what);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badResponseError(label, status, 'it is not the JSON envelope the API sends');
  }
  const b = body as Record<string, unknown>;
  const code = readApiCode(b.code);
  if (code === null) {
    throw badResponseError(label, status, 'it has no numeric `code`');
  }
  return { code, msg: typeof b.msg === 'string' ? b.msg : '', data: b.data, body: b };
}

/** Reads the list part of a successful envelope. */
export function readListPage(
  envelope: Envelope,
  requestedPage: number,
  status: number,
  label: { method: string; path: string },
): ListPage {
  const data = envelope.data;
  if (Array.isArray(data)) {
    // every row at once (a variant some clients accept): its rows are its count, so it must have some
    if (data.length === 0) throw noPaging(label, status, '`data` is an empty array');
    return { rows: data, rowsPath: 'data', page: 1, totalPages: null, dataCount: data.length, pageSize: null };
  }
  if (data && typeof data === 'object' && Array.isArray((data as { list?: unknown }).list)) {
    const d = data as { list: unknown[]; pagenation?: unknown; pagination?: unknown };
    const paging = d.pagenation ?? d.pagination;
    const p = (paging !== null && typeof paging === 'object' ? paging : {}) as Record<string, unknown>;
    const totalPages = toNumber(p.total_page);
    const dataCount = toNumber(p.data_count);
    if (totalPages === null && dataCount === null)
      throw noPaging(label, status, '`data.list` comes without `data.pagenation`');
    return {
      rows: d.list,
      rowsPath: 'data.list',
      page: toNumber(p.current_page) ?? requestedPage,
      totalPages,
      dataCount,
      pageSize: toNumber(p.pagesize),
    };
  }
  throw badResponseError(label, status, 'a list answer without `data.list` or an array in `data`');
}

/** A list answer that does not say how long the list is: an empty shop and a broken answer look the same. */
function noPaging(label: { method: string; path: string }, status: number, what: string) {
  return badResponseError(
    label,
    status,
    `${what} (no total_page or data_count): it does not say how long the list is, so nothing is taken from it`,
  );
}
