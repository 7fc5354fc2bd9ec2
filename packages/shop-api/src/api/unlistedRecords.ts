// What a complete listing proves about the stored records it did not name, shared by the engine's coupon sync and
// the relay's upstream listing. Offset paging that shifted under a listing (a record deleted on a page already
// read) skips a live record without changing the count, so an unlisted record is deleted only once it is confirmed
// gone: its own GET answers not found, or the previous complete listing did not name it either. `listingEnd` is
// the rule (its table: worker/sync/direct/listingCheckpoint.ts); `askUnlisted` makes the GETs.
import { isTransient } from './apiError';
import type { ItemAnswer } from './apiClient';
import type { RejectedRecord } from '../records/parseRecords';

/** What a GET of an unlisted key said: not found (`gone`), or found, readable or not (`there`). */
export type UnlistedAnswer = 'gone' | 'there';

/** What a complete listing that adds up does next. */
export type ListingEnd =
  | { step: 'commit'; gone: string[]; kept: string[] }
  | { step: 'confirm'; ask: string[] }
  | { step: 'relist' | 'stop'; suspects: string[]; why: string };

export interface ListingEndFacts {
  /** Stored keys no page listed (nor anything else confirmed meanwhile). */
  unlisted: string[];
  /** Keys the previous complete listing did not list either; `all`: it listed nothing at all. */
  suspects: ReadonlySet<string> | 'all';
  /** What the GETs of this listing's end said. */
  answers: ReadonlyMap<string, UnlistedAnswer>;
  /** How many keys may be asked for one by one. */
  bound: number;
  /** A GET was refused (not an answer about the record), or there is none to ask: only a second listing confirms. */
  unaskable: boolean;
  /** This run may list once more. */
  mayRelist: boolean;
}

/**
 * The step a complete listing that adds up takes with the stored keys it did not list: `commit` (those agreed or
 * answered gone are deleted; `kept`: found by their GET, kept as it answered), `confirm` (ask these by their GET),
 * `relist` (not applied: list again from page 1, these are its suspects) or `stop` (not applied, no more listings).
 * @example listingEnd({ unlisted: ['A'], suspects: new Set(), answers: new Map(), bound: 15, unaskable: false,
 * mayRelist: true }) // { step: 'confirm', ask: ['A'] }
 */
export function listingEnd(f: ListingEndFacts): ListingEnd {
  const agreed = (key: string) => f.suspects === 'all' || f.suspects.has(key);
  const there = f.unlisted.filter((key) => f.answers.get(key) === 'there');
  const notThere = f.unlisted.filter((key) => f.answers.get(key) !== 'there');
  const open = notThere.filter((key) => !agreed(key) && !f.answers.has(key));
  if (there.length > 0) {
    if (f.mayRelist)
      return {
        step: 'relist',
        suspects: notThere,
        why: `its pages skipped ${there.length} record(s) the API still has (e.g. ${JSON.stringify(there[0])})`,
      };
    if (open.length === 0) return { step: 'commit', gone: notThere, kept: there };
  }
  if (open.length === 0) return { step: 'commit', gone: notThere, kept: [] };
  if (open.length <= f.bound && !f.unaskable) return { step: 'confirm', ask: open };
  const why = f.unaskable
    ? `${open.length} record(s) it did not list could not be asked for one by one`
    : `${open.length} record(s) it did not list are to be confirmed gone by a second listing`;
  return { step: f.mayRelist ? 'relist' : 'stop', suspects: notThere, why };
}

/** The GETs cost less than listing again while they are few: the API allows five of them for each list call. */
export function confirmationBound(pages: number): number {
  return Math.min(MAX_CONFIRMATIONS, CONFIRMATIONS_PER_PAGE * Math.max(1, pages));
}
const CONFIRMATIONS_PER_PAGE = 5;
const MAX_CONFIRMATIONS = 100;

/** GETs in flight at once (the limiter still spaces them: 5 a second on the real API). */
const IN_FLIGHT = 4;

export interface UnlistedAnswers<T> {
  answers: Map<string, UnlistedAnswer>;
  /** The found ones as their GET answered (kept if the listing is applied without listing them). */
  kept: Map<string, T>;
  /** Found, but their record cannot be read. */
  unreadable: Map<string, RejectedRecord>;
  /** Why a GET was refused (not an answer about the record): the keys not asked stay open. */
  refused: { code: string; message: string } | null;
}

/** Nothing asked yet. */
export const emptyAnswers = <T>(): UnlistedAnswers<T> => ({
  answers: new Map(),
  kept: new Map(),
  unreadable: new Map(),
  refused: null,
});

/**
 * Asks for each key with `get` (which retries as its caller's work does), a few at a time; adds what it learns to
 * `into`. A failure that can heal (or an abort) is thrown once every GET under way has ended.
 * @example await askUnlisted(['WELCOME10'], (code) => client.getCoupon(code), (c) => c.coupon_code, answers);
 */
export async function askUnlisted<T>(
  keys: string[],
  get: (key: string) => Promise<ItemAnswer<T>>,
  keyOf: (record: T) => string,
  into: UnlistedAnswers<T>,
  signal?: AbortSignal,
): Promise<UnlistedAnswers<T>> {
  const queue = [...keys];
  let failure: { error: unknown } | null = null;
  const one = async (key: string) => {
    const answer = await get(key);
    into.answers.set(key, answer.record === null && !answer.rejected ? 'gone' : 'there');
    // (answered under another key: found, but not a copy of this one)
    if (answer.record !== null && keyOf(answer.record) === key) into.kept.set(key, answer.record);
    if (answer.rejected) into.unreadable.set(key, answer.rejected);
  };
  const worker = async () => {
    for (let key = queue.shift(); key !== undefined && into.refused === null && !failure; key = queue.shift()) {
      try {
        await one(key);
      } catch (error) {
        const code = (error as { code?: unknown })?.code;
        if (typeof code !== 'string' || isTransient(error) || signal?.aborted) failure ??= { error };
        // a refusal (the server does not let this client read one record, say) is no answer about the record
        else into.refused ??= { code, message: (error as Error).message };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, keys.length) }, worker));
  if (failure) throw (failure as { error: unknown }).error;
  return into;
}
