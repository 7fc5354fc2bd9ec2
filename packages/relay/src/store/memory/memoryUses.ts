// The `uses` resource in this process's memory: the records in the feed's own snapshot of the resource (written
// through the feed, so each change is a feed change), how many uses they hold, each till's count and strikes, when
// each till was last heard from, and the codes not yet seen in an API answer (as redisUses.ts keeps them in Redis).
import type { RelayStore } from '../relayStore';
import { heardAt, type TillHeard } from '../tillHeard';
import { dropFrom } from '../useDrops';
import type { UsesRecord } from '@shop-lookup/shop-api';
import { mergeUses, newestReceived, strikesOf, type TillCounts } from '../useRecords';
import type { memoryFeed } from './memoryFeed';

export interface MemoryUsesDeps {
  now: () => number;
  /** The feed the records are written through. */
  feed: ReturnType<typeof memoryFeed>['writes'];
}

type UsesPart = Pick<RelayStore, 'commitUses' | 'dropUses' | 'hearTill' | 'uncheckedUses' | 'checkedUses' | 'listUses'>;

/** @example const uses = memoryUses({ now, feed: feed.writes }); await uses.commitUses(commit); */
export function memoryUses({ now, feed }: MemoryUsesDeps): UsesPart {
  const { put, remove, committed, currentHead } = feed;
  const clone = <T>(value: T): T => structuredClone(value);
  let usesKept = 0; // uses held by the `uses` records
  const tillCounts = new Map<string, TillCounts>(); // each till's uses held and strikes
  const tillHeard = new Map<string, TillHeard>(); // when the relay last heard from each till
  const unchecked = new Map<string, number>(); // codes not seen in an API answer → when first recorded

  const usesRecord = (code: string) => (feed.records('uses')?.get(code)?.record as UsesRecord | undefined) ?? null;

  function codesExpiredBefore(at: number): string[] {
    const expired: string[] = [];
    for (const [code, entry] of feed.records('uses') ?? [])
      if (newestReceived(entry.record as UsesRecord) < at) expired.push(code);
    return expired;
  }

  /** Writes one code's record after a change (null: it goes). */
  function writeUses(code: string, record: UsesRecord | null): void {
    if (record) put('uses', code, record, '');
    else {
      remove('uses', code);
      unchecked.delete(code);
    }
  }

  /** Drops the whole records of the codes expired before `at` (retention); returns the codes and uses dropped. */
  function dropExpired(at: number): { codes: string[]; uses: number } {
    const codes = codesExpiredBefore(at);
    let uses = 0;
    for (const code of codes) {
      const { uses: n } = dropFrom(usesRecord(code)!, { why: 'expired' }, tillCounts, at, at);
      writeUses(code, null);
      uses += n;
    }
    usesKept -= uses;
    return { codes, uses };
  }

  return {
    async commitUses(commit) {
      const touched = new Map<string, UsesRecord | null>();
      const load = () => {
        touched.clear();
        for (const batch of commit.batches) {
          for (const use of batch.uses) touched.set(use.code, usesRecord(use.code));
          for (const release of batch.releases ?? []) touched.set(release.code, usesRecord(release.code));
        }
      };
      load();
      const asked = commit.batches.reduce((n, b) => n + b.uses.length, 0);
      // near the cap: the expired codes go first
      let changed = false;
      if (usesKept + asked > commit.max && dropExpired(commit.expiredBefore).codes.length > 0) {
        changed = true;
        load();
      }
      const heard = new Map(commit.batches.map((b) => [b.till, tillHeard.get(b.till) ?? null]));
      const merged = mergeUses(touched, commit, usesKept, tillCounts, heard);
      for (const [till, h] of heard) if (h) tillHeard.set(till, h);
      for (const code of merged.changed) writeUses(code, touched.get(code) ?? null);
      const known = new Set(commit.known ?? []);
      for (const code of merged.created) {
        const record = touched.get(code);
        if (record && !known.has(code)) unchecked.set(code, newestReceived(record));
      }
      usesKept = merged.kept;
      const head = changed || merged.changed.size > 0 ? committed() : currentHead();
      return { outcomes: merged.outcomes, head, counts: merged.counts };
    },

    async dropUses(drop) {
      const at = drop.at ?? now();
      const expiredBefore = drop.expiredBefore;
      const expired = expiredBefore === undefined ? { codes: [], uses: 0 } : dropExpired(expiredBefore);
      const dropped = [...expired.codes];
      let uses = expired.uses;
      const codes = drop.codes?.length
        ? [...new Set(drop.codes)]
        : drop.till !== undefined
          ? [...(feed.records('uses')?.keys() ?? [])]
          : [];
      for (const code of codes) {
        const record = usesRecord(code);
        if (!record) continue;
        const from = drop.strikesFrom ?? expiredBefore ?? Number.NEGATIVE_INFINITY;
        const { next, uses: n } = dropFrom(record, drop, tillCounts, at, from);
        if (next === undefined) continue;
        writeUses(code, next);
        dropped.push(code);
        uses += n;
      }
      usesKept -= uses;
      if (expiredBefore !== undefined) {
        // the sweep: tills not heard from within retention, and holding nothing, are forgotten
        for (const [till, h] of tillHeard) if (h.heard < expiredBefore) tillHeard.delete(till);
        for (const [till, c] of tillCounts)
          if (c.held === 0 && strikesOf(c, expiredBefore) === 0) tillCounts.delete(till);
      }
      return { dropped, uses, head: dropped.length > 0 ? committed() : currentHead() };
    },

    async hearTill(till, at) {
      tillHeard.set(till, heardAt(tillHeard.get(till), at));
    },

    async uncheckedUses(before, limit) {
      return [...unchecked]
        .filter(([, at]) => at < before)
        .sort((a, b) => a[1] - b[1])
        .slice(0, limit)
        .map(([code]) => code);
    },

    async checkedUses(codes) {
      for (const code of codes) unchecked.delete(code);
    },

    async listUses({ till, codes, limit }) {
      const out: UsesRecord[] = [];
      for (const code of codes ?? [...(feed.records('uses')?.keys() ?? [])]) {
        if (out.length >= limit) break;
        const record = usesRecord(code);
        const uses = record?.uses.filter((u) => till === undefined || u.till === till) ?? [];
        if (record && uses.length > 0) out.push(clone({ ...record, uses }));
      }
      return out;
    },
  };
}
