// The feed over Redis: head (handle, version, oldest, confirmedAt), the snapshot as per-resource hashes of records
// and of record hashes plus a lexicographic key index for stable chunks, the change log as a sorted set by version
// (trimmed to `maxChanges`), and commitListing: one MULTI/EXEC under the lease that also publishes the new head.
import { randomUUID } from 'node:crypto';
import { ShopLookupError } from '@shop-lookup/shop-api';
import { underLease, type LeaseContext } from './redisLease';
import type { RedisClient } from './redisConnection';
import type { RedisKeys } from './redisKeys';
import type { FeedChange, FeedHead, FeedRecord, ListingCommit, ResourceId, SnapshotChunk } from '../relayStore';

export interface RedisFeedDeps extends LeaseContext {
  /** Changes kept in the log; older `since` values must start again. */
  maxChanges: number;
  /**
   * Told when a read finds Redis without the feed's history (flushed, restarted without its data) and starts it anew.
   */
  onNewHistory?: () => Promise<unknown>;
}

function parseHead(
  handle: string,
  version: string | null,
  oldest: string | null,
  confirmed: Record<string, string>,
): FeedHead {
  const confirmedAt: FeedHead['confirmedAt'] = {};
  for (const [resource, at] of Object.entries(confirmed)) confirmedAt[resource as ResourceId] = Number(at);
  return { handle, version: Number(version ?? 0), oldest: Number(oldest ?? 0), confirmedAt };
}

/**
 * The head; makes the handle when there is none yet (a new or flushed Redis: the history starts anew), and then
 * tells `onNewHistory`. `watching`: inside WATCH, where a MULTI would end the watch, so the reads are plain;
 * elsewhere one MULTI reads them at once.
 */
export async function readHead(
  client: RedisClient,
  keys: RedisKeys,
  watching = false,
  onNewHistory?: () => Promise<unknown>,
): Promise<FeedHead> {
  const [handle, version, oldest, confirmed] = (
    watching
      ? await Promise.all([
          client.get(keys.handle),
          client.get(keys.version),
          client.get(keys.oldest),
          client.hGetAll(keys.confirmed),
        ])
      : await client.multi().get(keys.handle).get(keys.version).get(keys.oldest).hGetAll(keys.confirmed).exec()
  ) as [string | null, string | null, string | null, Record<string, string>];
  if (handle !== null) return parseHead(handle, version, oldest, confirmed);
  const made = await client.set(keys.handle, `${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`, { NX: true });
  if (made !== null) await onNewHistory?.();
  return readHead(client, keys, watching);
}

/** Cursor of a snapshot read: the resource and the last key handed out. */
function encodeCursor(resource: ResourceId, key: string): string {
  return Buffer.from(JSON.stringify([resource, key])).toString('base64url');
}

function decodeCursor(cursor: string): [ResourceId, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return value as [ResourceId, string];
    }
  } catch {
    // falls through to the error below
  }
  throw new ShopLookupError(
    'bad_cursor',
    'The snapshot cursor is not one this relay handed out: start the snapshot again.',
  );
}

/** Slices of at most `size` items (variadic commands of a sensible size). */
export function chunks<T>(items: T[], size = 5000): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** ZRANGE BYLEX bound just after `key`. */
const after = (key: string): string => `(${key}`;

const SEP = '\u0000';

/** A record as stored: its JSON kept for the feed's answer, parsed once when `record` is first read. */
function storedRecord(resource: ResourceId, key: string, json: string): FeedRecord {
  let parsed: { value: unknown } | null = null;
  return {
    resource,
    key,
    json,
    get record() {
      parsed ??= { value: JSON.parse(json) };
      return parsed.value;
    },
  };
}

/**
 * The ZRANGE BYLEX start of `resource`'s keys that follow the snapshot position `position` (`resource\0key`), or
 * null when every key of it comes before.
 */
function lexAfter(resource: ResourceId, position: string | null): string | null {
  const prefix = resource + SEP;
  if (position === null || position < prefix) return '-';
  if (position.startsWith(prefix)) return after(position.slice(prefix.length));
  return null;
}

/** A change before its version is known. */
export type NewChange = Omit<FeedChange, 'version'>;

/**
 * The change-log entries of `changes` after `head` (consecutive versions), the head's new version, and the oldest
 * version the log keeps after them (versions are consecutive, so the log keeps exactly (last - maxChanges, last]:
 * older entries are not written).
 * @example const { version, oldest, log } = logEntries(head, [{ resource: 'uses', key: 'IC-1', op: 'delete' }],
 * 100_000);
 */
export function logEntries(head: FeedHead, changes: NewChange[], maxChanges: number) {
  const last = head.version + changes.length;
  const oldest = Math.max(head.oldest, last - maxChanges);
  const log: { score: number; value: string }[] = [];
  changes.forEach((change, i) => {
    const version = head.version + i + 1;
    if (version > oldest) log.push({ score: version, value: JSON.stringify({ version, ...change }) });
  });
  return { version: last, oldest, log };
}

/** @example const feed = redisFeed({ conn, keys, now: Date.now, maxChanges: 100_000 }); await feed.head(); */
export function redisFeed(deps: RedisFeedDeps) {
  const { conn, keys, maxChanges, onNewHistory } = deps;
  const { client } = conn;

  return {
    head: () => readHead(client, keys, false, onNewHistory),

    async readSnapshot(cursor: string | null, max: number): Promise<{ records: FeedRecord[]; next: string | null }> {
      const limit = Math.max(1, max);
      const resources = ((await client.sMembers(keys.resources)) as ResourceId[]).sort();
      let [resource, lastKey] = cursor === null ? [resources[0], null] : decodeCursor(cursor);
      const records: FeedRecord[] = [];
      let index = resource === undefined ? 0 : resources.findIndex((r) => r >= resource!);
      if (index < 0) return { records, next: null };
      if (resources[index] !== resource) lastKey = null; // that resource is gone: go on with the next
      while (index < resources.length && records.length < limit) {
        const current = resources[index]!;
        const wanted = limit - records.length;
        const batch = (await client.zRange(keys.keys(current), lastKey === null ? '-' : after(lastKey), '+', {
          BY: 'LEX',
          LIMIT: { offset: 0, count: wanted },
        })) as string[];
        if (batch.length > 0) {
          const values = (await client.hmGet(keys.records(current), batch)) as (string | null)[];
          batch.forEach((key, i) => {
            // deleted between the two reads: the changes after the snapshot's version carry the delete
            const json = values[i];
            if (json != null) records.push({ resource: current, key, record: JSON.parse(json) });
          });
          lastKey = batch.at(-1)!;
        }
        if (batch.length < wanted) {
          index++;
          lastKey = null;
        } else {
          return { records, next: encodeCursor(current, lastKey!) };
        }
      }
      return { records, next: null };
    },

    async readChunk(after: string | null, max: number): Promise<SnapshotChunk> {
      const limit = Math.max(1, max);
      const [handle, members] = (await client.multi().get(keys.handle).sMembers(keys.resources).exec()) as unknown as [
        string | null,
        string[],
      ];
      const resources = (members as ResourceId[]).sort();
      // keys first, one more than asked (to know whether anything follows), then their records per resource
      const picked: { resource: ResourceId; batch: string[] }[] = [];
      let count = 0;
      for (const resource of resources) {
        const from = lexAfter(resource, after);
        if (from === null) continue;
        const batch = (await client.zRange(keys.keys(resource), from, '+', {
          BY: 'LEX',
          LIMIT: { offset: 0, count: limit + 1 - count },
        })) as string[];
        if (batch.length === 0) continue;
        picked.push({ resource, batch });
        count += batch.length;
        if (count > limit) break;
      }
      const done = count <= limit;
      if (!done) picked.at(-1)!.batch.pop();
      const records: FeedRecord[] = [];
      let last = after;
      for (const { resource, batch } of picked) {
        if (batch.length === 0) continue;
        const values = (await client.hmGet(keys.records(resource), batch)) as (string | null)[];
        batch.forEach((key, i) => {
          // deleted between the two reads: the changes after the snapshot's version carry the delete
          const json = values[i];
          if (json != null) records.push(storedRecord(resource, key, json));
        });
        last = resource + SEP + batch.at(-1)!;
      }
      return { records, last, done, handle: handle ?? '' };
    },

    async readChanges(since: number, limit: number): Promise<FeedChange[] | null> {
      const [oldest, entries] = (await client
        .multi()
        .get(keys.oldest)
        .zRange(keys.log, `(${since}`, '+inf', { BY: 'SCORE', LIMIT: { offset: 0, count: Math.max(1, limit) } })
        .exec()) as unknown as [string | null, string[]];
      if (since < Number(oldest ?? 0)) return null;
      return entries.map((entry) => JSON.parse(entry) as FeedChange);
    },

    async readHashes(resource: ResourceId): Promise<Map<string, string>> {
      return new Map(Object.entries((await client.hGetAll(keys.hashes(resource))) as Record<string, string>));
    },

    async readRecord(resource: ResourceId, key: string): Promise<unknown | null> {
      const json = (await client.hGet(keys.records(resource), key)) as string | null;
      return json === null ? null : JSON.parse(json);
    },

    async commitListing(commit: ListingCommit): Promise<FeedHead> {
      const { resource } = commit;
      const done = await underLease(
        deps,
        commit.lease,
        [keys.version, keys.oldest, keys.handle, keys.hashes(resource)],
        async (tx) => {
          const head = await readHead(tx, keys, true, onNewHistory);
          // only keys in the snapshot are deleted (and get a version)
          const found =
            commit.deletes.length === 0
              ? []
              : ((await tx.hmGet(keys.hashes(resource), commit.deletes)) as (string | null)[]);
          return { head, deletes: commit.deletes.filter((_, i) => found[i] != null) };
        },
        (multi, { head, deletes }) => {
          const { version, oldest, log } = logEntries(
            head,
            [
              ...commit.upserts.map((up): NewChange => ({ resource, key: up.key, op: 'upsert', record: up.record })),
              ...deletes.map((key): NewChange => ({ resource, key, op: 'delete' })),
            ],
            maxChanges,
          );
          // a few big commands rather than one per record: a first listing of 100,000 coupons is one commit
          for (const part of chunks(commit.upserts)) {
            multi.hSet(
              keys.records(resource),
              part.map((up) => [up.key, JSON.stringify(up.record)] as [string, string]),
            );
            multi.hSet(
              keys.hashes(resource),
              part.map((up) => [up.key, up.hash] as [string, string]),
            );
            multi.zAdd(
              keys.keys(resource),
              part.map((up) => ({ score: 0, value: up.key })),
            );
          }
          for (const part of chunks(deletes)) {
            multi.hDel(keys.records(resource), part);
            multi.hDel(keys.hashes(resource), part);
            multi.zRem(keys.keys(resource), part);
          }
          for (const part of chunks(log)) multi.zAdd(keys.log, part);
          if (oldest > head.oldest) multi.zRemRangeByScore(keys.log, '-inf', oldest);
          const next: FeedHead = {
            ...head,
            version,
            oldest,
            confirmedAt: { ...head.confirmedAt, [resource]: commit.confirmedAt },
          };
          multi.set(keys.version, String(version));
          multi.set(keys.oldest, String(oldest));
          multi.sAdd(keys.resources, resource);
          multi.hSet(keys.confirmed, resource, String(commit.confirmedAt));
          // in the same transaction: every instance hears of exactly the heads that were committed
          multi.publish(keys.channel, JSON.stringify(next));
          return next;
        },
      );
      if (!done) {
        throw new ShopLookupError(
          'lease_lost',
          `Another relay instance took the "${commit.lease.name}" lease: this listing's commit was refused.`,
        );
      }
      return done.written;
    },
  };
}
