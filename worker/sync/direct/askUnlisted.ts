// The single GETs that settle stored coupons a complete listing did not name: not found (gone), or found (the
// listing's pages skipped it). A few at a time, each under the rate limiter and the sync's retry policy.
import type { Coupon, LookupError } from '../../../src/protocol';
import { isTransient } from '../../api/apiError';
import { rejectionError } from '../../records/parseRecords';
import type { UnreadableRecord } from '../../store/unreadableMarks';
import type { SyncContext } from '../syncContext';
import type { UnlistedAnswer } from './listingCheckpoint';

/** GETs in flight at once (the limiter still spaces them: 5 a second on the real API). */
const IN_FLIGHT = 4;

export interface UnlistedAnswers {
  answers: Map<string, UnlistedAnswer>;
  /** The found ones as their GET answered (kept if the listing is applied without listing them). */
  kept: Coupon[];
  /** Found, but their record cannot be read. */
  unreadable: (UnreadableRecord & { error: LookupError })[];
  /** A GET was refused (not an answer about the coupon): the ones not asked stay open. */
  refused: LookupError | null;
}

/**
 * Asks the API for each code; adds what it learns to `into`. A failure that can heal (after the sync's retries)
 * is thrown: the listing stays complete in its checkpoint and the next sync asks again.
 * @example const a = await askUnlisted(ctx, ['WELCOME10'], emptyAnswers()); a.answers.get('WELCOME10') // 'gone'
 */
export async function askUnlisted(ctx: SyncContext, codes: string[], into: UnlistedAnswers): Promise<UnlistedAnswers> {
  const queue = [...codes];
  const one = async (code: string) => {
    const answer = await ctx.call(() =>
      ctx.client.getCoupon(code, { priority: ctx.priority, signal: ctx.signal, counter: ctx.report }),
    );
    ctx.report.fetched++;
    if (answer.record === null && !answer.rejected) into.answers.set(code, 'gone');
    else into.answers.set(code, 'there');
    // (answered under another code: found, but not a copy of this one)
    if (answer.record?.coupon_code === code) into.kept.push(answer.record);
    if (answer.rejected) {
      const error = rejectionError(`GET /v2/shop/coupons/${code}`, answer.rejected);
      into.unreadable.push({ code, message: error.message, error });
    }
  };
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    for (let code = queue.shift(); code !== undefined && into.refused === null && !failure; code = queue.shift()) {
      try {
        await one(code);
      } catch (error) {
        const code = (error as { code?: unknown })?.code;
        if (typeof code !== 'string' || isTransient(error) || ctx.signal?.aborted) failure ??= { error };
        // a refusal (the server does not let this client read one coupon, say) is no answer about the coupon
        else into.refused ??= { code, message: (error as LookupError).message };
      }
    }
  };
  // (every worker stops at the first failure; none is left running when this returns)
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, codes.length) }, worker));
  if (failure) throw (failure as { error: unknown }).error;
  return into;
}

/** Nothing asked yet. */
export const emptyAnswers = (): UnlistedAnswers => ({ answers: new Map(), kept: [], unreadable: [], refused: null });
