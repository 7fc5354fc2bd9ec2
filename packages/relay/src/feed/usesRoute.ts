// POST {basePath}/relay/v1/uses: a till tells the shop's relay which issued coupons it accepted (and claims one
// before an online verdict, and gives one back when a sale is voided); the relay keeps them in its store as the
// feed's `uses` resource (every till hears of them live) until the shop API shows the code used (then a mark stays
// for retention), the code turns out not to exist, an operator drops them, or usesRetentionMs passes. The POSTs
// that arrive while a commit is under way go together in the next one: one store transaction at a time per relay,
// however many tills send, so two claims of one voucher are decided one after the other (across instances too:
// the store's transaction orders them).
import type { UsesAnswer, UsesRecord } from '@shop-lookup/shop-api';
import type { IncomingMessage } from 'node:http';
import type { Client } from '../door/clientIdentity';
import { jsonAnswer, type ProxyAnswer } from '../door/proxyAnswers';
import type { ServerLog } from '../door/serverLog';
import type { RelayStore } from '../store/relayStore';
import type { UsesDropWhy } from '../store/useDrops';
import { tillUsesFull, usesFull, type UsesBatch, type UsesOutcome } from '../store/useRecords';
import { feedError } from './serveFeed';
import { readUsesBody } from './usesBody';

/**
 * One thing that happened to the tills' uses of issued coupons (RelayObserver.uses): uses recorded (and how many of
 * them conflict with an earlier sale), released by their till (a voided sale), dropped (`why`: past retention,
 * confirmed by the shop API, by an operator, of a code the shop does not have), or a request refused (`reason`).
 * @example observer: { uses: (e) => e.kind === 'refused' && refusals.inc({ reason: e.reason }) }
 */
export type UsesEvent =
  | { kind: 'recorded'; uses: number; conflicts: number }
  | { kind: 'released'; uses: number }
  | { kind: 'dropped'; why: 'expired' | 'confirmed' | 'operator' | 'unknown'; uses: number }
  | {
      kind: 'refused';
      reason:
        | 'uses_full'
        | 'till_uses_full'
        | 'claim_refused'
        | 'release_refused'
        | 'bad_request'
        | 'relay_unavailable';
    };

export interface UsesRouteDeps {
  store: RelayStore;
  now: () => number;
  /** maxUses: uses kept per shop. */
  max: number;
  /** maxUsesPerTill: uses one till may hold. */
  maxPerTill: number;
  /** usesRetentionMs. */
  retentionMs: number;
  log: ServerLog;
  /** Told what happened to uses (the command's metrics). */
  observe?: ((event: UsesEvent) => void) | undefined;
}

export interface UsesRoute {
  /** Answers `POST relay/v1/uses`. */
  post(req: IncomingMessage, client: Client): Promise<ProxyAnswer>;
  /**
   * An answer of `GET /v2/shop/issue-coupons/{code}` the relay read: a code it shows used keeps a mark, a code the
   * API says does not exist has its uses dropped (counted against their tills), a code it answers is known.
   */
  read(code: string, answer: ProxyAnswer | undefined): void;
  /** A till's request to the feed: when the relay last heard from it (what bounds its uses' times). */
  hear(client: Client): void;
  /** Drops the codes whose uses are past retention (the relay's sweep). */
  prune(): Promise<void>;
  /** Codes the store has not seen the API answer for, recorded long enough ago to be checked now. */
  unchecked(limit: number): Promise<string[]>;
  /** The API's answer about a code a till used: it exists (true), or not (false: its uses go). */
  checked(code: string, exists: boolean): Promise<void>;
  /** An operator's drop: a till's uses, a code's, or a till's of some codes. Logged with who asked. */
  drop(filter: { till?: string; codes?: string[] }, who: string): Promise<{ codes: number; uses: number }>;
  /** An operator's list of the uses held (a till's, some codes'), at most `limit` codes. */
  list(filter: { till?: string; codes?: string[]; limit?: number }): Promise<UsesRecord[]>;
}

/** Retry-After of a `uses_full` answer, s: expired uses go with the next sweep or commit. */
const FULL_RETRY_S = 60;
/** Retry-After of a `till_uses_full` answer, s: the till's uses go when confirmed, expired or dropped. */
const TILL_FULL_RETRY_S = 600;
/** Retry-After while the store cannot be written, s. */
const STORE_RETRY_S = 2;
/** POSTs merged into one commit at most. */
const BATCHES_AT_ONCE = 100;
/** Codes known to exist (an API answer the relay read) kept in mind per instance. */
const KNOWN_CODES = 10_000;
/** A feed request of a till is noted in the store at most this often per till (what the bound needs is coarser). */
const HEAR_EVERY_MS = 10_000;
/** An operator's list, at most. */
const LIST_MAX = 1_000;
/**
 * A use of a code the relay has not seen the API answer for is checked once it is this old: an honest till read the
 * code through the relay before it sold it, so the check is for what no till read (made-up codes).
 */
const CHECK_AFTER_MS = 5 * 60 * 1000;

const isJson = (type: string | undefined): boolean => type?.split(';')[0]?.trim().toLowerCase() === 'application/json';
const filled = (v: unknown): boolean =>
  v !== undefined && v !== null && String(v).trim() !== '' && v !== 0 && v !== '0';

/**
 * Whether an issued coupon's record shows it used: a `use_date` or `shop_order_code`, or the status the API gives a
 * used one (`complete`; the tills' default coupon policy says the same).
 * @example shownUsed({ coupon_issue_code: 'IC-1', use_date: '2026-11-27 10:00' }) // true
 */
function shownUsed(record: unknown): boolean {
  if (typeof record !== 'object' || record === null) return false;
  const r = record as Record<string, unknown>;
  return (
    filled(r.use_date) ||
    filled(r.shop_order_code) ||
    String(r.status ?? '')
      .trim()
      .toLowerCase() === 'complete'
  );
}

/** What an issued-coupon answer says of its code: used, exists (unused), does not exist, or nothing. */
function answerSays(answer: ProxyAnswer | undefined): 'used' | 'exists' | 'unknown' | null {
  if (!answer) return null;
  let body: { code?: unknown; data?: unknown };
  try {
    body = JSON.parse(answer.body.toString('utf8')) as typeof body;
  } catch {
    return null;
  }
  if (body?.code === -11) return 'unknown';
  if (answer.status !== 200 || typeof body?.data !== 'object' || body.data === null) return null;
  return shownUsed(body.data) ? 'used' : 'exists';
}

/** The till a request is, by its token's name when the host identified it, else by the device it names. */
const tillName = (client: Client, device: string): string =>
  client.identified ? client.id.replace(/^till:/, '') : device;

/**
 * The default share of the shop's uses one till may hold: a twentieth of maxUses, at least 100 (never more than
 * maxUses).
 * @example defaultUsesPerTill(100_000) // 5000
 */
export const defaultUsesPerTill = (max: number): number => Math.min(max, Math.max(100, Math.ceil(max / 20)));

/** @example const uses = createUsesRoute({ store, now, max: 100_000, maxPerTill: 5_000, retentionMs, log }); */
export function createUsesRoute(deps: UsesRouteDeps): UsesRoute {
  const { store } = deps;
  const observe = deps.observe ?? (() => undefined);
  type Done = { outcome: UsesOutcome; version: number } | { error: unknown };
  type Waiting = { batch: UsesBatch; done: (done: Done) => void };
  const queue: Waiting[] = [];
  let running = false;
  /** Codes the relay saw the API answer for, oldest first (a Map keeps insertion order). */
  const known = new Map<string, true>();
  const lastHeard = new Map<string, number>();

  const know = (code: string) => {
    known.delete(code);
    known.set(code, true);
    if (known.size > KNOWN_CODES) known.delete(known.keys().next().value!);
  };

  /** Commits what waits, in groups, one commit at a time. */
  async function drain(): Promise<void> {
    if (running) return;
    running = true;
    try {
      while (queue.length > 0) {
        const group = queue.splice(0, BATCHES_AT_ONCE);
        const batches = group.map((w) => w.batch);
        try {
          const { outcomes, head, counts } = await store.commitUses({
            batches,
            max: deps.max,
            maxPerTill: deps.maxPerTill,
            expiredBefore: deps.now() - deps.retentionMs,
            known: [...new Set(batches.flatMap((b) => b.uses.map((u) => u.code)))].filter((code) => known.has(code)),
          });
          for (const [i, w] of group.entries()) w.done({ outcome: outcomes[i]!, version: head.version });
          if (counts.recorded > 0) observe({ kind: 'recorded', uses: counts.recorded, conflicts: counts.conflicts });
          if (counts.released > 0) observe({ kind: 'released', uses: counts.released });
          for (let n = 0; n < counts.claimsRefused; n++) observe({ kind: 'refused', reason: 'claim_refused' });
        } catch (error) {
          for (const w of group) w.done({ error });
        }
      }
    } finally {
      running = false;
    }
  }

  const commit = (batch: UsesBatch) =>
    new Promise<Done>((done) => {
      queue.push({ batch, done });
      void drain();
    });

  async function drop(
    filter: { codes?: string[]; till?: string; expiredBefore?: number; strikesFrom?: number },
    why: UsesDropWhy,
  ): Promise<{ codes: number; uses: number }> {
    const { dropped, uses } = await store.dropUses({ ...filter, why, at: deps.now() });
    if (uses > 0) observe({ kind: 'dropped', why, uses });
    return { codes: dropped.length, uses };
  }

  /** A drop that runs on its own: a failure waits for the next sweep. */
  const dropLater = (filter: { codes?: string[]; strikesFrom?: number }, why: UsesDropWhy) =>
    void drop(filter, why).catch((error) =>
      deps.log('warn', `dropping uses (${why}) failed; they are dropped at the next sweep`, error),
    );

  const refused = (reason: Extract<UsesEvent, { kind: 'refused' }>['reason'], answer: ProxyAnswer) => {
    observe({ kind: 'refused', reason });
    return answer;
  };

  return {
    async post(req, client) {
      if (!isJson(req.headers['content-type'])) {
        req.resume(); // the body is not read: let it drain
        return refused(
          'bad_request',
          feedError(
            415,
            'unsupported_media_type',
            'UNSUPPORTED MEDIA TYPE: send { "device": "…", "uses": [ … ] } with Content-Type: application/json.',
          ),
        );
      }
      const body = await readUsesBody(req);
      if (typeof body === 'string')
        return refused('bad_request', feedError(400, 'bad_request', `BAD REQUEST: ${body}.`));
      const till = tillName(client, body.device);
      const done = await commit({
        device: body.device,
        till,
        uses: body.uses,
        receivedAt: deps.now(),
        ...(body.claim ? { claim: true } : {}),
        ...(body.releases.length > 0 ? { releases: body.releases } : {}),
      });
      if ('error' in done) {
        // the store away (Redis restarting): the till sends them again (a use kept meanwhile is recorded once)
        deps.log('warn', 'uses could not be recorded: the relay store failed', done.error);
        return refused(
          'relay_unavailable',
          feedError(
            503,
            'relay_unavailable',
            'RELAY UNAVAILABLE: the relay store could not record these uses now; send them again after Retry-After (a use already recorded is not recorded twice).',
            { 'retry-after': String(STORE_RETRY_S) },
          ),
        );
      }
      if ('full' in done.outcome)
        return refused(
          'uses_full',
          feedError(503, 'uses_full', usesFull(deps.max).message, { 'retry-after': String(FULL_RETRY_S) }),
        );
      if ('tillFull' in done.outcome)
        return refused(
          'till_uses_full',
          feedError(429, 'till_uses_full', tillUsesFull(till, deps.maxPerTill).message, {
            'retry-after': String(TILL_FULL_RETRY_S),
          }),
        );
      const releases = done.outcome.releases;
      for (const r of releases ?? []) if (r.refused) observe({ kind: 'refused', reason: 'release_refused' });
      const answer: UsesAnswer = {
        uses: done.outcome.results,
        ...(releases ? { releases } : {}),
        version: done.version,
      };
      return jsonAnswer(200, answer);
    },
    read(code, answer) {
      const says = answerSays(answer);
      if (says === null) return;
      if (says === 'unknown') {
        // the API says so: the uses of a code the shop does not have go, counted against the tills that sent them
        dropLater({ codes: [code], strikesFrom: deps.now() - deps.retentionMs }, 'unknown');
        return;
      }
      know(code);
      void store.checkedUses([code]).catch(() => undefined);
      if (says === 'used') dropLater({ codes: [code] }, 'confirmed');
    },
    hear(client) {
      if (!client.identified) return;
      const at = deps.now();
      const till = tillName(client, '');
      if (at - (lastHeard.get(till) ?? Number.NEGATIVE_INFINITY) < HEAR_EVERY_MS) return;
      lastHeard.set(till, at);
      if (lastHeard.size > KNOWN_CODES) lastHeard.delete(lastHeard.keys().next().value!);
      void store.hearTill(till, at).catch(() => lastHeard.delete(till));
    },
    prune: () =>
      drop({ codes: [], expiredBefore: deps.now() - deps.retentionMs }, 'expired').then(
        () => undefined,
        (error) => deps.log('warn', 'dropping uses (retention) failed; they are dropped at the next sweep', error),
      ),
    unchecked: (limit) => store.uncheckedUses(deps.now() - CHECK_AFTER_MS, limit),
    async checked(code, exists) {
      if (exists) {
        know(code);
        await store.checkedUses([code]);
      } else await drop({ codes: [code], strikesFrom: deps.now() - deps.retentionMs }, 'unknown');
    },
    async drop(filter, who) {
      const codes = filter.codes?.filter((c) => c !== '');
      const scope = {
        ...(filter.till !== undefined ? { till: filter.till } : {}),
        ...(codes && codes.length > 0 ? { codes } : {}),
      };
      if (scope.till === undefined && scope.codes === undefined) return { codes: 0, uses: 0 };
      const result = await drop(scope, 'operator');
      deps.log(
        'warn',
        `uses dropped by ${who}: ${result.uses} uses of ${result.codes} codes (till ${scope.till ?? 'any'}, codes ${scope.codes ? scope.codes.length : 'any'})`,
      );
      return result;
    },
    list: (filter) =>
      store.listUses({
        till: filter.till,
        codes: filter.codes,
        limit: Math.min(LIST_MAX, Math.max(1, filter.limit ?? LIST_MAX)),
      }),
  };
}
