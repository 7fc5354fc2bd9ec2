// ShopLookupError, the one error class, and toLookupError, which turns any thrown value into plain LookupError data.
import type { LookupError, RecordIssue } from './types';

/**
 * The one error class of shop-lookup. Errors cross the worker boundary as plain `LookupError` data, so match on
 * `code`, never on `instanceof`.
 * @example
 * try { await lookup.sync(); } catch (e) { if ((e as LookupError).code === 'closed') return; }
 */
export class ShopLookupError extends Error implements LookupError {
  override name = 'ShopLookupError';
  code: string;
  status?: number;
  apiCode?: number;
  issues?: RecordIssue[];

  constructor(
    code: string,
    message: string,
    extra: { status?: number; apiCode?: number; issues?: RecordIssue[]; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.code = code;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.apiCode !== undefined) this.apiCode = extra.apiCode;
    if (extra.issues !== undefined) this.issues = extra.issues;
  }
}

/** Any thrown value as plain `LookupError` data (what crosses the worker boundary and what lookups emit). */
export function toLookupError(error: unknown): LookupError {
  const e = error as Partial<LookupError> & { name?: string; message?: string };
  if (e && typeof e === 'object' && typeof e.code === 'string' && typeof e.message === 'string') {
    const out: LookupError = { code: e.code, message: e.message };
    if (typeof e.status === 'number') out.status = e.status;
    if (typeof e.apiCode === 'number') out.apiCode = e.apiCode;
    if (Array.isArray(e.issues)) out.issues = e.issues.map((i) => ({ path: i.path, message: i.message }));
    return out;
  }
  const name = e?.name ?? 'Error';
  return { code: 'internal_error', message: `${name}: ${e?.message ?? String(error)}` };
}
