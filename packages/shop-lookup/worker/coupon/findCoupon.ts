// Which record a checkout code leads to. Two code spaces: coupon codes (`coupons` table, GET /coupons/{code}) and
// issued-coupon codes (`issuedCoupons` table, GET /issue-coupons/{code}); the coupon table is searched first.
// While online the API is asked even when a local copy exists (an issued coupon may have been used at another
// till a minute ago), but only for NETWORK_WAIT_MS: a failure or a slow answer leaves the local copy to decide.
import type { Coupon, IssuedCoupon, LookupError } from '../../src/protocol';
import { olderThan } from '../store/dataAge';
import { latestConfirmation, metaKey, type Confirmation, type MetaRow, type ShopDatabase } from '../store/store';
import type { CouponValidatorDeps } from './validateCoupon';
import type { FoundCoupon } from './decideCoupon';
import { findParentCoupon } from './findParentCoupon';

/** How long a checkout waits for the API before deciding from local data (the refresh goes on in the background).
 * @example findCoupon(code, { ...deps, waitMs: NETWORK_WAIT_MS }) */
const NETWORK_WAIT_MS = 2_000;

type Space = 'coupon' | 'issued';

export interface FindCouponDeps
  extends Pick<CouponValidatorDeps, 'db' | 'now' | 'isOffline' | 'refreshCoupon' | 'refreshIssuedCoupon'> {
  /** How old a "does not exist" confirmation may be and still give `not_found` from local data. */
  maxDataAgeMs: number;
  waitMs?: number;
  /**
   * A storefront (`coupons: 'byCode'`): its codes are coupon codes, the issued-coupon space is never asked (its
   * server refuses it) and not needed for `not_found`; issued coupons read through before still count locally.
   */
  storefront?: boolean;
}

export type FindOutcome = (
  | { found: FoundCoupon }
  | { absent: 'not_found' | 'unknown_offline'; syncedAt: number | null; source: 'local' | 'network' }
  /**
   * No copy is stored, and the record the API sent for this code (a coupon's or an issued coupon's) could not be
   * read.
   */
  | { absent: 'unreadable'; syncedAt: number | null; source: 'local'; message: string }
  /** Not known here, and the API answered without deciding (refused this client, an error): `problem` says why. */
  | { absent: 'unchecked'; syncedAt: null; source: 'local' }
) & {
  /** An API call of this lookup failed at network level (refused, dropped, timed out, or too slow). */
  networkTrouble: boolean;
  /**
   * Why the API did not decide this lookup, with the URL or path asked: null when it did, or when it was not asked
   * because the till is offline. A refusal of the shop's server (`forbidden`) is one: never an answer about the data.
   */
  problem: LookupError | null;
};

interface LocalState {
  coupon: Coupon | undefined;
  issued: IssuedCoupon | undefined;
  confirmed: Record<Space, number | null>;
  /** Why the code's latest record could not be read (an unreadable mark), per space, else null. */
  unreadable: Record<Space, string | null>;
}

const markOf = (row: MetaRow | undefined) => (row && 'unreadable' in row ? row.unreadable.message : null);

/** What both code spaces hold for `code` (and the confirmations of each), in one consistent read. */
async function readCodeSpaces(db: ShopDatabase, code: string): Promise<LocalState> {
  return db.transaction('r', [db.coupons, db.issuedCoupons, db.meta], async () => {
    const [direct, issued, meta] = await Promise.all([
      db.coupons.get(code),
      db.issuedCoupons.get(code),
      db.meta.bulkGet([metaKey.coupons, metaKey.coupon(code), metaKey.issued(code)]),
    ]);
    // the API answered this code with the coupon under another code (case-insensitive matching, say): that one
    const alias = direct ? undefined : (meta[1] as Confirmation | undefined)?.code;
    const [coupon, aliasRow] =
      alias !== undefined
        ? await Promise.all([db.coupons.get(alias), db.meta.get(metaKey.coupon(alias))])
        : [direct, undefined];
    return {
      coupon,
      issued,
      confirmed: { coupon: latestConfirmation([meta[0], meta[1], aliasRow]), issued: latestConfirmation([meta[2]]) },
      unreadable: { coupon: markOf(meta[1]) ?? markOf(aliasRow), issued: markOf(meta[2]) },
    };
  });
}

const NETWORK_CODES = new Set(['network_error', 'timeout']);

/** The error a refresh failed with, as plain data (a bug without a code of ours says so). */
function problemOf(e: unknown): LookupError {
  const { code, message, status, apiCode } = (e ?? {}) as Partial<LookupError>;
  if (typeof code !== 'string')
    return {
      code: 'internal_error',
      message: `Checking the code failed: ${e instanceof Error ? e.message : String(e)}`,
    };
  const problem: LookupError = { code, message: typeof message === 'string' ? message : code };
  if (typeof status === 'number') problem.status = status;
  if (typeof apiCode === 'number') problem.apiCode = apiCode;
  return problem;
}

/** Runs one refresh within `waitMs`: ok, or why not (a failure at network level, or too slow, is `network`). */
function ask(
  refresh: () => Promise<void>,
  waitMs: number,
): Promise<{ ok: boolean; network: boolean; problem: LookupError | null }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      const seconds = Math.round(waitMs / 100) / 10;
      const message = `The shop API did not answer within ${seconds} s, so local data decided; its answer is still stored when it comes.`;
      resolve({ ok: false, network: true, problem: { code: 'timeout', message } });
    }, waitMs);
    Promise.resolve()
      .then(refresh)
      .then(
        () => resolve({ ok: true, network: false, problem: null }),
        (e: unknown) => {
          const problem = problemOf(e);
          resolve({ ok: false, network: NETWORK_CODES.has(problem.code), problem });
        },
      )
      .finally(() => clearTimeout(timer));
  });
}

/**
 * Looks `code` up locally, then (unless offline) asks the API: only the space the local copy is in, or both at
 * once when neither has it; a space whose record the API just removed leads to asking the other one.
 * `not_found` needs both spaces (a storefront: the coupon space) confirmed empty, by the API now or by
 * confirmations at most `maxDataAgeMs` old (the coupon listing counts for the coupon space). Anything less is
 * `unchecked` when the API answered without deciding (a refusal of the shop's server, an error answer), else
 * `unknown_offline`.
 * @example const outcome = await findCoupon('IC-0000-OPEN', deps); if ('found' in outcome) decide(outcome.found);
 */
export async function findCoupon(code: string, deps: FindCouponDeps): Promise<FindOutcome> {
  const waitMs = deps.waitMs ?? NETWORK_WAIT_MS;
  // a storefront's checkout takes coupon codes only: its server refuses issued coupons, so they are never asked
  const spaces: Space[] = deps.storefront ? ['coupon'] : ['coupon', 'issued'];
  const fromNetwork = new Set<Space>();
  const problems: Partial<Record<Space, LookupError>> = {};
  let networkTrouble = false;
  let local = await readCodeSpaces(deps.db, code);

  const askSpaces = async (asked: Space[]) => {
    const answers = await Promise.all(
      asked.map((s) => ask(() => (s === 'coupon' ? deps.refreshCoupon(code) : deps.refreshIssuedCoupon(code)), waitMs)),
    );
    answers.forEach((a, i) => {
      const space = asked[i]!;
      if (a.ok) fromNetwork.add(space);
      if (a.problem) problems[space] = a.problem;
      if (a.network) networkTrouble = true;
    });
    local = await readCodeSpaces(deps.db, code);
  };

  if (!deps.isOffline()) {
    const first: Space[] = local.coupon ? ['coupon'] : local.issued && !deps.storefront ? ['issued'] : spaces;
    await askSpaces(first);
    const rest = spaces.filter((s) => !first.includes(s));
    // the one space asked has nothing (any more): the other one decides, so the API is asked for it too
    const emptied = first.length === 1 && !(first[0] === 'coupon' ? local.coupon : local.issued);
    if (emptied && rest.length > 0 && !networkTrouble) await askSpaces(rest);
  }

  const source = (s: Space) => (fromNetwork.has(s) ? 'network' : 'local');
  if (local.coupon) {
    const found: FoundCoupon = {
      kind: 'coupon',
      record: local.coupon,
      syncedAt: local.confirmed.coupon,
      source: source('coupon'),
    };
    if (local.unreadable.coupon !== null) found.unreadable = local.unreadable.coupon;
    return { found, networkTrouble, problem: problems.coupon ?? null };
  }
  if (local.unreadable.coupon !== null) {
    return {
      absent: 'unreadable',
      syncedAt: local.confirmed.coupon,
      source: 'local',
      message: local.unreadable.coupon,
      networkTrouble,
      problem: problems.coupon ?? null,
    };
  }
  if (local.issued) {
    const found: FoundCoupon = {
      kind: 'issued',
      record: local.issued,
      syncedAt: local.confirmed.issued,
      source: source('issued'),
    };
    if (local.unreadable.issued !== null) found.unreadable = local.unreadable.issued;
    const askApi =
      deps.isOffline() || networkTrouble
        ? null
        : (c: string) => ask(() => deps.refreshCoupon(c), waitMs).then((a) => a.ok);
    found.parent = await findParentCoupon(deps.db, local.issued, local.confirmed.issued, askApi);
    return { found, networkTrouble, problem: problems.issued ?? problems.coupon ?? null };
  }
  if (local.unreadable.issued !== null) {
    return {
      absent: 'unreadable',
      syncedAt: local.confirmed.issued,
      source: 'local',
      message: local.unreadable.issued,
      networkTrouble,
      problem: problems.issued ?? null,
    };
  }
  const problem = problems.coupon ?? problems.issued ?? null;
  const now = deps.now();
  // a space the shop's server refused (or that answered an error) is not answered: only the API's word, or a
  // confirmation young enough, says a code is not there
  const trusted = (s: Space) => fromNetwork.has(s) || !olderThan(local.confirmed[s], now, deps.maxDataAgeMs);
  if (spaces.every(trusted)) {
    const known = spaces.map((s) => local.confirmed[s]);
    const syncedAt = known.every((t): t is number => t !== null) ? Math.min(...known) : null;
    const src = spaces.every((s) => fromNetwork.has(s)) ? 'network' : 'local';
    return { absent: 'not_found', syncedAt, source: src, networkTrouble, problem };
  }
  if (problem && !NETWORK_CODES.has(problem.code))
    return { absent: 'unchecked', syncedAt: null, source: 'local', networkTrouble, problem };
  return { absent: 'unknown_offline', syncedAt: null, source: 'local', networkTrouble, problem };
}
