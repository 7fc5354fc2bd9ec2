// validateCoupon: the checkout decision. Finds the record a code leads to (findCoupon: local first, the API when
// online), runs the rules (decideCoupon), and journals every verdict given from local data (online or offline,
// whatever kept the API from deciding) and every accepted issued coupon. Online, an accepted issued coupon is
// claimed from the shop's relay before the answer: the relay records it only as the voucher's first use, so two
// tills asked at once never both say yes (within a short bound; past it the till's own rules stand, and say so).
import { ShopLookupError } from '../../src/protocol';
import type {
  CouponOrder,
  CouponPolicy,
  CouponRelease,
  CouponVerdict,
  JournalEntry,
  JournalPage,
  LookupError,
  ReleaseOrder,
} from '../../src/protocol';
import { typedCode } from '@shop-lookup/shop-api';
import { ENGINE_DEFAULTS } from '../defaults';
import { resolvePolicy } from './couponPolicy';
import { absentVerdict, decideCoupon } from './decideCoupon';
import { findCoupon } from './findCoupon';
import { findOtherTillUses } from './findOtherTillUses';
import { readOrder, readRelease } from './readOrder';
import type { CheckedOrder } from './ruleOutcome';
import { assertTimeZone } from './shopTime';
import { createOfflineJournal, type JournalHealth } from './offlineJournal';
import { usedField } from './statusRule';
import type { ClaimAnswer, OutgoingUse, ShopDatabase } from '../store/store';
import { otherTillUseRule } from './otherTillUseRule';

export interface CouponValidatorDeps {
  db: ShopDatabase;
  now: () => number;
  /** The API cannot be reached right now. */
  isOffline: () => boolean;
  /**
   * Fetches the coupon from the API into IndexedDB (read-through; `-11` stores "does not exist"). Rejects on failure.
   */
  refreshCoupon(code: string): Promise<void>;
  refreshIssuedCoupon(code: string): Promise<void>;
  /** Told how many journal entries wait in memory because storage refused them, and why (null: none wait). */
  onJournal?: JournalHealth;
  /** Why the database is in memory (nothing survives a reload, so nothing is "journaled"); null: it is IndexedDB. */
  memoryOnly?: LookupError | null;
  /**
   * Sends an accepted issued coupon's use to the shop's relay as a claim and says what it answered (within its
   * bound); `{ claim: null }` when the till syncs from no relay that takes its uses. Absent: no claims.
   */
  claimUse?: (use: OutgoingUse) => Promise<ClaimAnswer>;
  options: {
    couponPolicy?: Partial<CouponPolicy> | undefined;
    timeZone?: string | undefined;
    maxDataAgeMs?: number | undefined;
    refreshIntervalMs: number;
    /** 'byCode': a storefront, whose checkout never asks for issued coupons. */
    coupons?: 'all' | 'byCode' | undefined;
  };
}

export interface CouponValidator {
  validate(code: string, order: CouponOrder): Promise<CouponVerdict>;
  /** Gives back this till's use of an issued coupon for a voided sale (offlineJournal.ts `release`). */
  release(code: string, order: ReleaseOrder): Promise<CouponRelease>;
  journal(page?: JournalPage): Promise<JournalEntry[]>;
  clearJournal(throughId: number): Promise<number>;
  /** Stops the journal's retries (the engine closes). */
  dispose(): void;
}

/** A 401 of the shop's relay or proxy: it refused this till's token (its message leads with that). */
const tokenRefused = (problem: LookupError | null | undefined): boolean =>
  problem?.code === 'forbidden' && problem.status === 401;

/** The host's options, checked once (a bad option throws `bad_options` from every validate call). */
function readSettings(options: CouponValidatorDeps['options']) {
  const timeZone = options.timeZone ?? ENGINE_DEFAULTS.timeZone;
  assertTimeZone(timeZone);
  const maxDataAgeMs = options.maxDataAgeMs ?? ENGINE_DEFAULTS.maxDataAgeMs;
  if (typeof maxDataAgeMs !== 'number' || Number.isNaN(maxDataAgeMs) || maxDataAgeMs < 0) {
    throw new ShopLookupError(
      'bad_options',
      `maxDataAgeMs must be a number of milliseconds of 0 or more, got ${String(maxDataAgeMs)}.`,
    );
  }
  return { policy: resolvePolicy(options.couponPolicy), timeZone, maxDataAgeMs };
}

/**
 * The engine's coupon validator. A bad order throws `ShopLookupError('bad_request')` (the host's bug, not a
 * verdict); everything about the coupon is a verdict.
 * @example const v = await createCouponValidator(deps).validate('WELCOME10', { amount: 32000 });
 * // { ok: true, discount: 3200, … }
 */
export function createCouponValidator(deps: CouponValidatorDeps): CouponValidator {
  const journal = createOfflineJournal(deps.db, deps.onJournal, deps.memoryOnly ?? null);
  let settings: ReturnType<typeof readSettings> | null = null;
  // the validations of one code run one after the other: the second sees the use the first recorded
  const running = new Map<string, Promise<unknown>>();

  function oneAtATime<T>(code: string, work: () => Promise<T>): Promise<T> {
    const mine = (running.get(code) ?? Promise.resolve()).then(work);
    const settled = mine.catch(() => undefined);
    running.set(code, settled);
    void settled.then(() => running.get(code) === settled && running.delete(code));
    return mine;
  }

  async function decide(
    code: string,
    checked: CheckedOrder,
    rules: ReturnType<typeof readSettings>,
  ): Promise<CouponVerdict> {
    const storefront = deps.options.coupons === 'byCode';
    const outcome = await findCoupon(code, { ...deps, maxDataAgeMs: rules.maxDataAgeMs, storefront });
    if ('found' in outcome && outcome.found.kind === 'issued') {
      // the API's record shows a use: this till's uses of it are confirmed (the status rule refuses it anyway);
      // otherwise they are what the repeat-use rule reads
      if (usedField(outcome.found.record, rules.policy) !== null) await journal.endUses(code).catch(() => undefined);
      else
        [outcome.found.uses, outcome.found.otherUses] = await Promise.all([
          journal.usesOf(code),
          findOtherTillUses(deps.db, code),
        ]);
    }
    const now = deps.now();
    const why = 'message' in outcome ? outcome.message : (outcome.problem?.message ?? '');
    const verdict =
      'found' in outcome
        ? decideCoupon(outcome.found, checked, { ...rules, now })
        : absentVerdict(code, outcome.absent, outcome.syncedAt, outcome.source, why, tokenRefused(outcome.problem));
    // what kept the API from deciding goes with a verdict decided without it
    if (outcome.problem && verdict.source === 'local') verdict.detail = { ...verdict.detail!, error: outcome.problem };
    // decided without the API's word (whatever the reason), or an issued coupon used (the API learns of the use
    // only from the shop's order system): kept for reconciling. A journal that cannot be written never blocks
    // the checkout; the verdict says so (and the entry waits in memory).
    if (verdict.source === 'local' || (verdict.ok && verdict.kind === 'issued')) {
      // (no problem and online: a storefront's issued coupon, whose space is never asked)
      const cause =
        verdict.source === 'network' ? null : (outcome.problem?.code ?? (deps.isOffline() ? 'offline' : 'not_asked'));
      // online, an issued coupon's "yes" is the relay's to give (an override accepts a second sale knowingly: no claim)
      const claiming =
        verdict.ok &&
        verdict.kind === 'issued' &&
        deps.claimUse !== undefined &&
        !deps.isOffline() &&
        !verdict.overrides?.includes('repeat_use');
      const kept = await journal.record({ code, order: checked, verdict, at: now, cause, claiming });
      verdict.journaled = kept.journaled;
      if (!kept.journaled) verdict.journalError = kept.error;
      if (claiming && kept.key !== null) return claim(verdict, kept.key, kept.use, rules.timeZone);
    }
    return verdict;
  }

  /** The verdict once the relay answered its claim (or did not in time): refused, it is `used_on_another_till`. */
  async function claim(
    verdict: CouponVerdict & { ok: true },
    key: string,
    use: OutgoingUse | null,
    timeZone: string,
  ): Promise<CouponVerdict> {
    const answer: ClaimAnswer = use
      ? await deps.claimUse!(use).catch((error: unknown): ClaimAnswer => ({ claim: 'failed', error }))
      : { claim: null };
    let final: CouponVerdict = verdict;
    if (answer.claim === 'refused') {
      const refusal = otherTillUseRule('issued', [answer.first], verdict.discount, timeZone);
      const { journaled, journalError } = verdict;
      if (!refusal.pass)
        final = {
          ok: false,
          reason: refusal.reason,
          coupon: verdict.coupon,
          kind: 'issued',
          syncedAt: verdict.syncedAt,
          source: verdict.source,
          detail: refusal.detail,
          ...(journaled !== undefined ? { journaled } : {}),
          ...(journalError ? { journalError } : {}),
          claim: 'refused',
        };
    } else if (answer.claim !== null) verdict.claim = answer.claim;
    await journal.settleClaim(key, answer, final).catch(() => undefined);
    return final;
  }

  return {
    async validate(typed, order) {
      const rules = (settings ??= readSettings(deps.options));
      // one form of the code for the API, the local tables and the journal
      const code = typedCode(typed);
      const checked = readOrder(code, order, deps.now());
      return oneAtATime(code, () => decide(code, checked, rules));
    },
    async release(typed, order) {
      const code = typedCode(typed);
      const orderId = readRelease(code, order);
      // (after any check of the code under way: a release never overtakes the sale it gives back)
      const journalIds = await oneAtATime(code, () => journal.release(code, orderId, deps.now()));
      return { code, orderId, released: journalIds.length, journalIds };
    },
    journal: (page) => journal.list(page),
    clearJournal: (throughId) => journal.clear(throughId),
    dispose: () => journal.dispose(),
  };
}
