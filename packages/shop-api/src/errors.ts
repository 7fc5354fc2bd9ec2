// ShopLookupError, the one error class of shop-lookup: the shop API client's errors, the engine's and the relay's.
import type { LookupErrorCode, RecordIssue, ServerErrorCode } from './types';

/**
 * The one error class of shop-lookup. Errors cross the worker boundary as plain `LookupError` data, so match on
 * `code`, never on `instanceof`.
 * @example
 * try { await lookup.sync(); } catch (e) { if ((e as LookupError).code === 'closed') return; }
 */
export class ShopLookupError<
  C extends LookupErrorCode | ServerErrorCode = LookupErrorCode | ServerErrorCode,
> extends Error {
  override name = 'ShopLookupError';
  code: C;
  status?: number;
  apiCode?: number;
  issues?: RecordIssue[];

  constructor(
    code: C,
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
