// POST {basePath}/relay/v1/uses: a till tells the shop's relay which issued coupons it accepted; the relay keeps them
// in its store as the feed's `uses` resource (every till hears of them live) until the shop API shows the code used
// (an issued-coupon answer the relay reads) or usesRetentionMs passes. The POSTs that arrive while a commit is under
// way go together in the next one: one store transaction at a time per relay, however many tills send.
import type { IncomingMessage } from 'node:http';
import type { Client } from '../door/clientIdentity';
import { jsonAnswer, type ProxyAnswer } from '../door/proxyAnswers';
import type { ServerLog } from '../door/serverLog';
import type { RelayStore } from '../store/relayStore';
import { usesFull, type UsesBatch, type UsesOutcome } from '../store/useRecords';
import { feedError } from './serveFeed';
import { readUsesBody } from './usesBody';

export interface UsesRouteDeps {
  store: RelayStore;
  now: () => number;
  /** maxUses: uses kept per shop. */
  max: number;
  /** usesRetentionMs. */
  retentionMs: number;
  log: ServerLog;
}

export interface UsesRoute {
  /** Answers `POST relay/v1/uses`. */
  post(req: IncomingMessage, client: Client): Promise<ProxyAnswer>;
  /** An answer of `GET /v2/shop/issue-coupons/{code}` the relay read: a code it shows used has its uses dropped. */
  read(code: string, answer: ProxyAnswer | undefined): void;
  /** Drops the codes whose uses are past retention (the relay's sweep). */
  prune(): Promise<void>;
}

/** Retry-After of a `uses_full` answer, s: expired uses go with the next sweep or commit. */
const FULL_RETRY_S = 60;
/** Retry-After while the store cannot be written, s. */
const STORE_RETRY_S = 2;
/** POSTs merged into one commit at most. */
const BATCHES_AT_ONCE = 100;

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

/** @example const uses = createUsesRoute({ store, now, max: 100_000, retentionMs: 30 * 86_400_000, log }); */
export function createUsesRoute(deps: UsesRouteDeps): UsesRoute {
  const { store } = deps;
  type Waiting = {
    batch: UsesBatch;
    done: (outcome: { outcome: UsesOutcome; version: number } | { error: unknown }) => void;
  };
  const queue: Waiting[] = [];
  let running = false;

  /** Commits what waits, in groups, one commit at a time. */
  async function drain(): Promise<void> {
    if (running) return;
    running = true;
    try {
      while (queue.length > 0) {
        const group = queue.splice(0, BATCHES_AT_ONCE);
        try {
          const { outcomes, head } = await store.commitUses({
            batches: group.map((w) => w.batch),
            max: deps.max,
            expiredBefore: deps.now() - deps.retentionMs,
          });
          for (const [i, w] of group.entries()) w.done({ outcome: outcomes[i]!, version: head.version });
        } catch (error) {
          for (const w of group) w.done({ error });
        }
      }
    } finally {
      running = false;
    }
  }

  const commit = (batch: UsesBatch) =>
    new Promise<{ outcome: UsesOutcome; version: number } | { error: unknown }>((done) => {
      queue.push({ batch, done });
      void drain();
    });

  async function drop(drop: { codes: string[]; expiredBefore?: number }, why: string): Promise<void> {
    try {
      await store.dropUses(drop);
    } catch (error) {
      deps.log('warn', `dropping uses (${why}) failed; they are dropped at the next sweep`, error);
    }
  }

  return {
    async post(req, client) {
      if (!isJson(req.headers['content-type'])) {
        req.resume(); // the body is not read: let it drain
        return feedError(
          415,
          'unsupported_media_type',
          'UNSUPPORTED MEDIA TYPE: send { "device": "…", "uses": [ … ] } with Content-Type: application/json.',
        );
      }
      const body = await readUsesBody(req);
      if (typeof body === 'string') return feedError(400, 'bad_request', `BAD REQUEST: ${body}.`);
      // the till by its token's name when the host identified it, else by its device
      const till = client.identified ? client.id.replace(/^till:/, '') : body.device;
      const done = await commit({ device: body.device, till, uses: body.uses, receivedAt: deps.now() });
      if ('error' in done) {
        // the store away (Redis restarting): the till sends them again (a use kept meanwhile is recorded once)
        deps.log('warn', 'uses could not be recorded: the relay store failed', done.error);
        return feedError(
          503,
          'relay_unavailable',
          'RELAY UNAVAILABLE: the relay store could not record these uses now; send them again after Retry-After (a use already recorded is not recorded twice).',
          { 'retry-after': String(STORE_RETRY_S) },
        );
      }
      if ('full' in done.outcome) {
        return feedError(503, 'uses_full', usesFull(deps.max).message, { 'retry-after': String(FULL_RETRY_S) });
      }
      return jsonAnswer(200, { uses: done.outcome.results, version: done.version });
    },
    read(code, answer) {
      if (answer?.status !== 200) return;
      let data: unknown;
      try {
        data = (JSON.parse(answer.body.toString('utf8')) as { data?: unknown }).data;
      } catch {
        return;
      }
      if (shownUsed(data)) void drop({ codes: [code] }, 'confirmed');
    },
    prune: () => drop({ codes: [], expiredBefore: deps.now() - deps.retentionMs }, 'retention'),
  };
}
