// The `uses` resource over Redis: the records in the feed's own hash of the resource (one hash per shop, under the
// shop's hash tag), their count, a sorted set of when each code's newest use arrived (retention and the cap), each
// till's count and strikes, when each till was last heard from, and the codes not yet seen in an API answer; written
// with the feed change in one MULTI/EXEC, WATCHed on the version, the records, the count and the tills' counts, so
// concurrent POSTs (and claims) on any instance of the shop merge in one order, never overwrite each other.
import type { UsesRecord } from '@shop-lookup/shop-api';
import { WatchError } from 'redis';
import { chunks, logEntries, readHead, type NewChange } from './redisFeed';
import type { RedisClient, RedisConnection } from './redisConnection';
import type { RedisKeys } from './redisKeys';
import type { FeedHead } from '../relayStore';
import { heardAt, type TillHeard } from '../tillHeard';
import { dropFrom, tillsOf, type UsesDrop, type UsesDropped } from '../useDrops';
import {
  mergeUses,
  newestReceived,
  strikesOf,
  type TillCounts,
  type UsesCommit,
  type UsesMerged,
  type UsesOutcome,
} from '../useRecords';

export interface RedisUsesDeps {
  conn: RedisConnection;
  keys: RedisKeys;
  maxChanges: number;
  now: () => number;
  onNewHistory?: () => Promise<unknown>;
}

/** Transactions interrupted by other writers before giving up (each instance sends one commit at a time). */
const ATTEMPTS = 50;
/** Expired codes dropped by one commit at most. */
const EXPIRED_AT_ONCE = 10_000;
/** Records read by one step of an operator's listing. */
const SCAN_COUNT = 1_000;

const parse = (json: string | null | undefined): UsesRecord | null =>
  json == null ? null : (JSON.parse(json) as UsesRecord);
const parseJson = <T>(json: string | null | undefined): T | null => (json == null ? null : (JSON.parse(json) as T));

type Multi = ReturnType<RedisClient['multi']>;

/** What one write of the uses changes besides the feed: the tills' counts and hearing, the unchecked codes. */
interface UsesWrite {
  upserts: UsesRecord[];
  deletes: string[];
  kept: number;
  tills: Map<string, TillCounts>;
  heard?: Map<string, TillHeard | null>;
  unchecked?: { score: number; value: string }[];
}

/** @example const uses = redisUses({ conn, keys, maxChanges: 100_000, now }); await uses.commitUses(commit); */
export function redisUses(deps: RedisUsesDeps) {
  const { conn, keys, maxChanges, onNewHistory } = deps;
  const records = keys.records('uses');

  /** Reads what a write depends on, then writes it; again when another writer changed the shop meanwhile. */
  function transaction<T>(
    step: (tx: RedisClient) => Promise<{ write: ((multi: Multi) => void) | null; value: T }>,
  ): Promise<T> {
    return conn.transaction(async (tx) => {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        await tx.watch([keys.version, records, keys.usesCount, keys.usesTills]);
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

  /** The counts of `tills` as stored (a till not stored: none). */
  async function readTills(tx: RedisClient, tills: Iterable<string>): Promise<Map<string, TillCounts>> {
    const names = [...new Set(tills)];
    if (names.length === 0) return new Map();
    const values = (await tx.hmGet(keys.usesTills, names)) as (string | null)[];
    const out = new Map<string, TillCounts>();
    for (const [i, till] of names.entries()) {
      const c = parseJson<TillCounts>(values[i]);
      if (c) out.set(till, c);
    }
    return out;
  }

  /**
   * Queues the records' upserts and the codes' deletes with their feed changes, the counts and the new head; returns
   * the head.
   */
  function write(multi: Multi, head: FeedHead, w: UsesWrite): FeedHead {
    const { version, oldest, log } = logEntries(
      head,
      [
        ...w.upserts.map((record): NewChange => ({ resource: 'uses', key: record.code, op: 'upsert', record })),
        ...w.deletes.map((key): NewChange => ({ resource: 'uses', key, op: 'delete' })),
      ],
      maxChanges,
    );
    if (w.upserts.length > 0) {
      multi.hSet(
        records,
        w.upserts.map((r) => [r.code, JSON.stringify(r)] as [string, string]),
      );
      multi.zAdd(
        keys.keys('uses'),
        w.upserts.map((r) => ({ score: 0, value: r.code })),
      );
      multi.zAdd(
        keys.usesReceived,
        w.upserts.map((r) => ({ score: newestReceived(r), value: r.code })),
      );
    }
    for (const part of chunks(w.deletes)) {
      multi.hDel(records, part);
      multi.zRem(keys.keys('uses'), part);
      multi.zRem(keys.usesReceived, part);
      multi.zRem(keys.usesUnchecked, part);
    }
    if (w.unchecked && w.unchecked.length > 0) multi.zAdd(keys.usesUnchecked, w.unchecked, { NX: true });
    if (w.tills.size > 0)
      multi.hSet(
        keys.usesTills,
        [...w.tills].map(([till, c]) => [till, JSON.stringify(c)] as [string, string]),
      );
    const heard = [...(w.heard ?? [])].filter((e): e is [string, TillHeard] => e[1] !== null);
    if (heard.length > 0)
      multi.hSet(
        keys.usesHeard,
        heard.map(([till, h]) => [till, JSON.stringify(h)] as [string, string]),
      );
    for (const part of chunks(log)) multi.zAdd(keys.log, part);
    if (oldest > head.oldest) multi.zRemRangeByScore(keys.log, '-inf', oldest);
    const next: FeedHead = { ...head, version, oldest };
    multi.set(keys.version, String(version));
    multi.set(keys.oldest, String(oldest));
    multi.set(keys.usesCount, String(w.kept));
    multi.sAdd(keys.resources, 'uses');
    multi.publish(keys.channel, JSON.stringify(next));
    return next;
  }

  /** The upserts and deletes of the codes a change touched (null in `touched`: delete). */
  const split = (touched: Map<string, UsesRecord | null>, codes: Iterable<string>) => {
    const upserts: UsesRecord[] = [];
    const deletes: string[] = [];
    for (const code of codes) {
      const record = touched.get(code);
      if (record) upserts.push(record);
      else deletes.push(code);
    }
    return { upserts, deletes };
  };

  return {
    commitUses: (
      commit: UsesCommit,
    ): Promise<{ outcomes: UsesOutcome[]; head: FeedHead; counts: UsesMerged['counts'] }> =>
      transaction(async (tx) => {
        const head = await readHead(tx, keys, true, onNewHistory);
        const codes = [
          ...new Set(
            commit.batches.flatMap((b) => [...b.uses.map((u) => u.code), ...(b.releases ?? []).map((r) => r.code)]),
          ),
        ];
        const names = [...new Set(commit.batches.map((b) => b.till))];
        // (one round trip: the records, the count, the tills' counts and hearing)
        const [values, count, heardValues, tillValues] = await Promise.all([
          codes.length === 0 ? [] : (tx.hmGet(records, codes) as Promise<(string | null)[]>),
          tx.get(keys.usesCount) as Promise<string | null>,
          tx.hmGet(keys.usesHeard, names) as Promise<(string | null)[]>,
          tx.hmGet(keys.usesTills, names) as Promise<(string | null)[]>,
        ]);
        const touched = new Map(codes.map((code, i) => [code, parse(values[i])]));
        let kept = Number(count ?? 0);
        // near the cap: the expired codes go first
        let old = new Map<string, UsesRecord | null>();
        if (kept + commit.batches.reduce((n, b) => n + b.uses.length, 0) > commit.max)
          old = await expired(tx, commit.expiredBefore);
        const tills = new Map<string, TillCounts>();
        for (const [i, till] of names.entries()) {
          const c = parseJson<TillCounts>(tillValues[i]);
          if (c) tills.set(till, c);
        }
        const others = [...tillsOf(old.values())].filter((till) => !names.includes(till));
        for (const [till, c] of await readTills(tx, others)) tills.set(till, c);
        for (const [code, record] of old) {
          if (record)
            kept -= dropFrom(record, { why: 'expired' }, tills, commit.expiredBefore, commit.expiredBefore).uses;
          if (touched.has(code)) touched.set(code, null);
        }
        const heard = new Map(names.map((till, i) => [till, parseJson<TillHeard>(heardValues[i])]));
        const merged = mergeUses(touched, commit, kept, tills, heard);
        const known = new Set(commit.known ?? []);
        const unchecked = [...merged.created]
          .filter((code) => !known.has(code) && touched.get(code))
          .map((code) => ({ score: newestReceived(touched.get(code)!), value: code }));
        const value = { outcomes: merged.outcomes, head, counts: merged.counts };
        const gone = [...old.keys()].filter((code) => !merged.changed.has(code));
        // (the tills' hearing is written even when nothing else changed: a resend is heard too)
        const { upserts, deletes } = split(touched, merged.changed);
        if (merged.changed.size === 0 && gone.length === 0) {
          const heardOnly = [...heard].filter((e): e is [string, TillHeard] => e[1] !== null);
          if (heardOnly.length > 0)
            await tx.hSet(
              keys.usesHeard,
              heardOnly.map(([till, h]) => [till, JSON.stringify(h)] as [string, string]),
            );
          return { write: null, value };
        }
        return {
          value,
          write: (multi) => {
            value.head = write(multi, head, {
              upserts,
              deletes: [...deletes, ...gone],
              kept: merged.kept,
              tills,
              heard,
              unchecked,
            });
          },
        };
      }),

    dropUses: (drop: UsesDrop): Promise<UsesDropped> =>
      transaction(async (tx) => {
        const at = drop.at ?? deps.now();
        const head = await readHead(tx, keys, true, onNewHistory);
        const old =
          drop.expiredBefore === undefined
            ? new Map<string, UsesRecord | null>()
            : await expired(tx, drop.expiredBefore);
        const asked = drop.codes?.length
          ? [...new Set(drop.codes)].filter((code) => !old.has(code))
          : drop.till !== undefined
            ? ((await tx.hKeys(records)) as string[]).filter((code) => !old.has(code))
            : [];
        const values = asked.length === 0 ? [] : ((await tx.hmGet(records, asked)) as (string | null)[]);
        const scope = new Map(asked.map((code, i) => [code, parse(values[i])]));
        const tills = await readTills(tx, tillsOf([...old.values(), ...scope.values()]));
        const touched = new Map<string, UsesRecord | null>();
        let uses = 0;
        for (const [code, record] of old) {
          if (!record) continue;
          uses += dropFrom(record, { why: 'expired' }, tills, drop.expiredBefore!, drop.expiredBefore!).uses;
          touched.set(code, null);
        }
        for (const [code, record] of scope) {
          if (!record) continue;
          const from = drop.strikesFrom ?? drop.expiredBefore ?? Number.NEGATIVE_INFINITY;
          const { next, uses: n } = dropFrom(record, drop, tills, at, from);
          if (next === undefined) continue;
          touched.set(code, next);
          uses += n;
        }
        // the sweep: tills not heard from within retention are forgotten (their counts, once they hold nothing)
        let forget: { heard: string[]; counts: string[] } = { heard: [], counts: [] };
        if (drop.expiredBefore !== undefined) {
          const all = (await tx.hGetAll(keys.usesHeard)) as Record<string, string>;
          const counts = (await tx.hGetAll(keys.usesTills)) as Record<string, string>;
          forget = {
            heard: Object.entries(all)
              .filter(([, json]) => (JSON.parse(json) as TillHeard).heard < drop.expiredBefore!)
              .map(([till]) => till),
            counts: Object.entries(counts)
              .filter(([till, json]) => {
                const c = tills.get(till) ?? (JSON.parse(json) as TillCounts);
                return c.held === 0 && strikesOf(c, drop.expiredBefore!) === 0;
              })
              .map(([till]) => till),
          };
        }
        const value: UsesDropped = { dropped: [...touched.keys()], uses, head };
        const forgetting = (multi: Multi) => {
          for (const part of chunks(forget.heard)) multi.hDel(keys.usesHeard, part);
          for (const part of chunks(forget.counts)) multi.hDel(keys.usesTills, part);
        };
        if (touched.size === 0) {
          if (forget.heard.length + forget.counts.length === 0) return { write: null, value };
          return { value, write: forgetting };
        }
        const kept = Math.max(0, Number((await tx.get(keys.usesCount)) ?? 0) - uses);
        const { upserts, deletes } = split(touched, touched.keys());
        for (const till of forget.counts) tills.delete(till);
        return {
          value,
          write: (multi) => {
            value.head = write(multi, head, { upserts, deletes, kept, tills });
            forgetting(multi);
          },
        };
      }),

    async hearTill(till: string, at: number): Promise<void> {
      const before = parseJson<TillHeard>((await conn.client.hGet(keys.usesHeard, till)) as string | null);
      const next = heardAt(before, at);
      if (next !== before) await conn.client.hSet(keys.usesHeard, till, JSON.stringify(next));
    },

    uncheckedUses: async (before: number, limit: number): Promise<string[]> =>
      (await conn.client.zRange(keys.usesUnchecked, '-inf', `(${before}`, {
        BY: 'SCORE',
        LIMIT: { offset: 0, count: limit },
      })) as string[],

    async checkedUses(codes: string[]): Promise<void> {
      if (codes.length > 0) await conn.client.zRem(keys.usesUnchecked, codes);
    },

    async listUses({
      till,
      codes,
      limit,
    }: {
      till?: string | undefined;
      codes?: string[] | undefined;
      limit: number;
    }): Promise<UsesRecord[]> {
      const out: UsesRecord[] = [];
      const take = (json: string | null | undefined) => {
        const record = parse(json);
        const uses = record?.uses.filter((u) => till === undefined || u.till === till) ?? [];
        if (record && uses.length > 0 && out.length < limit) out.push({ ...record, uses });
      };
      if (codes) {
        if (codes.length > 0)
          for (const json of (await conn.client.hmGet(records, codes)) as (string | null)[]) take(json);
        return out;
      }
      let cursor = '0';
      do {
        const page = await conn.client.hScan(records, cursor, { COUNT: SCAN_COUNT });
        cursor = String(page.cursor);
        for (const e of page.entries) take(String(e.value));
      } while (cursor !== '0' && out.length < limit);
      return out;
    },
  };
}
