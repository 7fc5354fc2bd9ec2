// Which record a checkout code leads to. Two code spaces: coupon codes (`coupons` table, GET /coupons/{code}) and
// issued-coupon codes (`issuedCoupons` table, GET /issue-coupons/{code}); the coupon table is searched first.
// While online the API is asked even when a local copy exists (an issued coupon may have been used at another
// till a minute ago), but only for NETWORK_WAIT_MS: a failure or a slow answer leaves the local copy to decide.
import { toLookupError } from '../../src/protocol';
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
}

export type FindOutcome = (
  | { found: FoundCoupon }
  | { absent: 'not_found' | 'unknown_offline'; syncedAt: number | null; source: 'local' | 'network' }
  /** No copy is stored, and the record the API sent for this code (a coupon's or an issued coupon's) could not be read. */
  | { absent: 'unreadable'; syncedAt: number | null; source: 'local'; message: string }
) & {
  /** An API call of this lookup failed at network level (refused, dropped, timed out, or too slow). */
  networkTrouble: boolean;
  /**
   * Why the API did not decide this lookup: the first failure of its calls (an error answer, no answer, a refusal,
   * or no answer within the wait: `timeout`). null: it decided, or it was not asked because the till is offline.
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
    const [coupon, aliasRow] = alias !== undefined ? await Promise.all([db.coupons.get(alias), db.meta.get(metaKey.coupon(alias))]) : [direct, undefined];
    return {
      coupon,
      issued,
      confirmed: { coupon: latestConfirmation([meta[0], meta[1], aliasRow]), issued: latestConfirmation([meta[2]]) },
      unreadable: { coupon: markOf(meta[1]) ?? markOf(aliasRow), issued: markOf(meta[2]) },
    };
  });
}

const NETWORK_CODES = new Set(['network_error', 'timeout']);

interface Answer {
  ok: boolean;
  network: boolean;
  refused?: boolean;
  /** Why it failed (null when ok). */
  problem: LookupError | null;
}

/** No answer within the checkout's wait: the refresh goes on, the local copy decides. */
const tooSlow = (waitMs: number): LookupError => ({
  code: 'timeout',
  message: `The shop API did not answer within ${waitMs / 1000} s, so this till decided from its local copy (the answer is stored once it comes).`,
});

/**
 * Runs one refresh within `waitMs`: ok, or failed (why, whether at network level, or refused to this client by the
 * shop's server: `forbidden`).
 */
function ask(refresh: () => Promise<void>, waitMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ ok: false, network: true, problem: tooSlow(waitMs) }), waitMs);
    Promise.resolve()
      .then(refresh)
      .then(
        () => resolve({ ok: true, network: false, problem: null }),
        (e: unknown) => {
          const problem = toLookupError(e);
          resolve({ ok: false, network: NETWORK_CODES.has(problem.code), refused: problem.code === 'forbidden', problem });
        },
      )
      .finally(() => clearTimeout(timer));
  });
}

/**
 * Looks `code` up locally, then (unless offline) asks the API: only the space the local copy is in, or both at
 * once when neither has it; a space whose record the API just removed leads to asking the other one.
 * `not_found` needs both spaces confirmed empty, by the API now or by confirmations at most `maxDataAgeMs` old
 * (the coupon listing counts for the coupon space); anything less is `unknown_offline`.
 * @example const outcome = await findCoupon('IC-0000-OPEN', deps); if ('found' in outcome) decide(outcome.found);
 */
export async function findCoupon(code: string, deps: FindCouponDeps): Promise<FindOutcome> {
  const waitMs = deps.waitMs ?? NETWORK_WAIT_MS;
  const fromNetwork = new Set<Space>();
  // spaces the shop's server does not let this client read (a storefront: issued coupons): none of its codes
  // can apply here, so they count as answered "not there"
  const refused = new Set<Space>();
  let networkTrouble = false;
  let problem: LookupError | null = null;
  let local = await readCodeSpaces(deps.db, code);

  const askSpaces = async (spaces: Space[]) => {
    const answers = await Promise.all(
      spaces.map((s) => ask(() => (s === 'coupon' ? deps.refreshCoupon(code) : deps.refreshIssuedCoupon(code)), waitMs)),
    );
    answers.forEach((a, i) => {
      if (a.ok) fromNetwork.add(spaces[i]!);
      if (a.refused) refused.add(spaces[i]!);
      if (a.network) networkTrouble = true;
      problem ??= a.problem;
    });
    local = await readCodeSpaces(deps.db, code);
  };

  if (!deps.isOffline()) {
    const first: Space[] = local.coupon ? ['coupon'] : local.issued ? ['issued'] : ['coupon', 'issued'];
    await askSpaces(first);
    const rest = (['coupon', 'issued'] as Space[]).filter((s) => !first.includes(s));
    // the one space asked has nothing (any more): the other one decides, so the API is asked for it too
    const emptied = first.length === 1 && !(first[0] === 'coupon' ? local.coupon : local.issued);
    if (emptied && !networkTrouble) await askSpaces(rest);
  }

  const source = (s: Space) => (fromNetwork.has(s) ? 'network' : 'local');
  // a failure of a call that did not decide (the other space's) is no reason of the verdict
  const why = (src: 'local' | 'network') => (src === 'network' ? null : problem);
  if (local.coupon) {
    const found: FoundCoupon = { kind: 'coupon', record: local.coupon, syncedAt: local.confirmed.coupon, source: source('coupon') };
    if (local.unreadable.coupon !== null) found.unreadable = local.unreadable.coupon;
    return { found, networkTrouble, problem: why(found.source) };
  }
  if (local.unreadable.coupon !== null) {
    return { absent: 'unreadable', syncedAt: local.confirmed.coupon, source: 'local', message: local.unreadable.coupon, networkTrouble, problem };
  }
  if (local.issued) {
    const found: FoundCoupon = { kind: 'issued', record: local.issued, syncedAt: local.confirmed.issued, source: source('issued') };
    if (local.unreadable.issued !== null) found.unreadable = local.unreadable.issued;
    const askApi = deps.isOffline() || networkTrouble ? null : (c: string) => ask(() => deps.refreshCoupon(c), waitMs).then((a) => a.ok);
    found.parent = await findParentCoupon(deps.db, local.issued, local.confirmed.issued, askApi);
    return { found, networkTrouble, problem: why(found.source) };
  }
  if (local.unreadable.issued !== null) {
    return { absent: 'unreadable', syncedAt: local.confirmed.issued, source: 'local', message: local.unreadable.issued, networkTrouble, problem };
  }
  const now = deps.now();
  const trusted = (s: Space) => fromNetwork.has(s) || refused.has(s) || !olderThan(local.confirmed[s], now, deps.maxDataAgeMs);
  if (trusted('coupon') && trusted('issued')) {
    const both = [local.confirmed.coupon, local.confirmed.issued].filter((t): t is number => t !== null);
    const syncedAt = both.length === 2 ? Math.min(...both) : null;
    const answered = (s: Space) => fromNetwork.has(s) || refused.has(s);
    const src = answered('coupon') && answered('issued') && fromNetwork.size > 0 ? 'network' : 'local';
    return { absent: 'not_found', syncedAt, source: src, networkTrouble, problem: why(src) };
  }
  return { absent: 'unknown_offline', syncedAt: null, source: 'local', networkTrouble, problem };
}
