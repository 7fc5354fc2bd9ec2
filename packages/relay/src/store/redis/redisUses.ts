// The `uses` resource over Redis: the records in the feed's own hash of the resource (one hash per shop, under the
// shop's hash tag), their count and a sorted set of when each code's newest use arrived (retention and the cap),
// written with the feed change in one MULTI/EXEC, WATCHed on the version and the records, so concurrent POSTs on any
// instance of the shop merge, never overwrite each other.
import { WatchError } from 'redis';
import { chunks, logEntries, readHead, type NewChange } from './redisFeed';
import type { RedisClient, RedisConnection } from './redisConnection';
import type { RedisKeys } from './redisKeys';
import type { FeedHead } from '../relayStore';
import { mergeUses, newestReceived, usesIn, type UsesCommit, type UsesOutcome, type UsesRecord } from '../useRecords';

export interface RedisUsesDeps {
  conn: RedisConnection;
  keys: RedisKeys;
  maxChanges: number;
  onNewHistory?: () => Promise<unknown>;
}

/** Transactions interrupted by other writers before giving up (each instance sends one commit at a time). */
const ATTEMPTS = 50;
/** Expired codes dropped by one commit at most. */
const EXPIRED_AT_ONCE = 10_000;

const parse = (json: string | null | undefined): UsesRecord | null =>
  json == null ? null : (JSON.parse(json) as UsesRecord);

/** @example const uses = redisUses({ conn, keys, maxChanges: 100_000 }); await uses.commitUses(commit); */
export function redisUses(deps: RedisUsesDeps) {
  const { conn, keys, maxChanges, onNewHistory } = deps;
  const records = keys.records('uses');

  /** Reads what a write depends on, then writes it; again when another writer changed the shop meanwhile. */
  function transaction<T>(
    step: (tx: RedisClient) => Promise<{ write: ((multi: ReturnType<RedisClient['multi']>) => void) | null; value: T }>,
  ): Promise<T> {
    return conn.transaction(async (tx) => {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        await tx.watch([keys.version, records, keys.usesCount]);
        const { write, value } = await step(tx);
        if (!write) {
          await tx.unwatch();
          return value;
        }
        const multi = tx.multi();
        write(multi);
        try {
          await multi.exec();
          return value;
        } catch (error) {
          if (!(error instanceof WatchError)) throw error;
        }
      }
      throw new Error(`uses: ${ATTEMPTS} transactions in a row were interrupted by other writers`);
    });
  }

  /** The codes expired before `at` with their records (at most EXPIRED_AT_ONCE). */
  async function expired(tx: RedisClient, at: number): Promise<Map<string, UsesRecord | null>> {
    const codes = (await tx.zRange(keys.usesReceived, '-inf', `(${at}`, {
      BY: 'SCORE',
      LIMIT: { offset: 0, count: EXPIRED_AT_ONCE },
    })) as string[];
    if (codes.length === 0) return new Map();
    const values = (await tx.hmGet(records, codes)) as (string | null)[];
    return new Map(codes.map((code, i) => [code, parse(values[i])]));
  }

  /**
   * Queues the records' upserts and the codes' deletes with their feed changes, the count and the new head; returns
   * the head.
   */
  function write(
    multi: ReturnType<RedisClient['multi']>,
    head: FeedHead,
    upserts: UsesRecord[],
    deletes: string[],
    kept: number,
  ): FeedHead {
    const { version, oldest, log } = logEntries(
      head,
      [
        ...upserts.map((record): NewChange => ({ resource: 'uses', key: record.code, op: 'upsert', record })),
        ...deletes.map((key): NewChange => ({ resource: 'uses', key, op: 'delete' })),
      ],
      maxChanges,
    );
    if (upserts.length > 0) {
      multi.hSet(
        records,
        upserts.map((r) => [r.code, JSON.stringify(r)] as [string, string]),
      );
      multi.zAdd(
        keys.keys('uses'),
        upserts.map((r) => ({ score: 0, value: r.code })),
      );
      multi.zAdd(
        keys.usesReceived,
        upserts.map((r) => ({ score: newestReceived(r), value: r.code })),
      );
    }
    for (const part of chunks(deletes)) {
      multi.hDel(records, part);
      multi.zRem(keys.keys('uses'), part);
      multi.zRem(keys.usesReceived, part);
    }
    for (const part of chunks(log)) multi.zAdd(keys.log, part);
    if (oldest > head.oldest) multi.zRemRangeByScore(keys.log, '-inf', oldest);
    const next: FeedHead = { ...head, version, oldest };
    multi.set(keys.version, String(version));
    multi.set(keys.oldest, String(oldest));
    multi.set(keys.usesCount, String(kept));
    multi.sAdd(keys.resources, 'uses');
    multi.publish(keys.channel, JSON.stringify(next));
    return next;
  }

  return {
    commitUses: (commit: UsesCommit): Promise<{ outcomes: UsesOutcome[]; head: FeedHead }> =>
      transaction(async (tx) => {
        const head = await readHead(tx, keys, true, onNewHistory);
        const codes = [...new Set(commit.batches.flatMap((b) => b.uses.map((u) => u.code)))];
        const [values, count] = await Promise.all([
          codes.length === 0 ? [] : (tx.hmGet(records, codes) as Promise<(string | null)[]>),
          tx.get(keys.usesCount) as Promise<string | null>,
        ]);
        const touched = new Map(codes.map((code, i) => [code, parse(values[i])]));
        let kept = Number(count ?? 0);
        // near the cap: the expired codes go first
        let gone: string[] = [];
        if (kept + commit.batches.reduce((n, b) => n + b.uses.length, 0) > commit.max) {
          const old = await expired(tx, commit.expiredBefore);
          gone = [...old.keys()];
          kept -= usesIn(old.values());
          for (const code of gone) if (touched.has(code)) touched.set(code, null);
        }
        const merged = mergeUses(touched, commit, kept);
        if (merged.changed.size === 0 && gone.length === 0)
          return { write: null, value: { outcomes: merged.outcomes, head } };
        const upserts = [...merged.changed].map((code) => touched.get(code)!);
        const value = { outcomes: merged.outcomes, head };
        return {
          value,
          write: (multi) => {
            value.head = write(
              multi,
              head,
              upserts,
              gone.filter((code) => !merged.changed.has(code)),
              merged.kept,
            );
          },
        };
      }),

    dropUses: ({
      codes,
      expiredBefore,
    }: {
      codes: string[];
      expiredBefore?: number;
    }): Promise<{ dropped: string[]; head: FeedHead }> =>
      transaction(async (tx) => {
        const head = await readHead(tx, keys, true, onNewHistory);
        const old =
          expiredBefore === undefined ? new Map<string, UsesRecord | null>() : await expired(tx, expiredBefore);
        const asked = [...new Set(codes)].filter((code) => !old.has(code));
        const values = asked.length === 0 ? [] : ((await tx.hmGet(records, asked)) as (string | null)[]);
        for (const [i, code] of asked.entries()) old.set(code, parse(values[i]));
        const dropped = [...old].filter(([, record]) => record !== null).map(([code]) => code);
        if (dropped.length === 0) return { write: null, value: { dropped, head } };
        const kept = Math.max(0, Number((await tx.get(keys.usesCount)) ?? 0) - usesIn(old.values()));
        const value = { dropped, head };
        return { value, write: (multi) => void (value.head = write(multi, head, [], dropped, kept)) };
      }),
  };
}
