// ShopLookupError, the one error class (the shop API client's, packages/shop-api), and toLookupError, which turns
// any thrown value into plain LookupError data.
import type { LookupError } from './types';

export { ShopLookupError } from '@shop-lookup/shop-api';

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
