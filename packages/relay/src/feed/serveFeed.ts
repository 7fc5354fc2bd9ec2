// GET {basePath}/relay/v1/feed (docs/feed-protocol.md): a snapshot in chunks, or the changes after a version; ETag
// and 304; a long-poll that answers as soon as the head moves past the client's, within its wait.
import type { ErrorAnswer, FeedAnswer, FeedDelete, FeedRecord, RelayErrorCode } from '@shop-lookup/shop-api';
import { jsonAnswer, jsonTextAnswer, type ProxyAnswer } from '../door/proxyAnswers';
import { feedRecordsJson } from './feedRecordsJson';
import type { FeedMirror } from './feedMirror';
import { feedAnswerCache } from './feedAnswerCache';
import { feedEtag, noneMatch } from './feedEtag';
import type { KeptChunks } from './keptChunks';
import { parseFeedQuery } from './feedQuery';
import type { LongPolls } from './longPolls';
import { chunkSize, KEPT_CHUNK_SIZE, type SnapshotCursor, type SnapshotCursors } from './snapshotCursors';
import type { FeedChange, FeedHead, RelayStore } from '../store/relayStore';

export interface FeedContext {
  /** The shop this relay serves (its `shopId`), named in every answer: a till checks it against its database's. */
  shop: string;
  store: RelayStore;
  mirror: FeedMirror;
  polls: LongPolls;
  /** Snapshot chunks' compressed bodies, kept in the store for every instance. */
  chunks: KeptChunks;
  /** The snapshot cursors this relay signs (and the only ones it takes). */
  cursors: SnapshotCursors;
  maxWaitSeconds: number;
  /** Whether the relay serves without its store or upstream, and why. */
  degraded(): { degraded: boolean; error: string | null };
}

/** Retry-After of a relay that has not finished its first listing (the engine asks again at this pace). */
const NOT_READY_RETRY_S = 5;

/** The error answer of the relay's own routes: `{ code, message }` (docs/errors.md lists the codes). */
export function feedError(
  status: number,
  code: RelayErrorCode,
  message: string,
  headers: Record<string, string> = {},
): ProxyAnswer {
  const answer: ErrorAnswer = { code, message };
  return jsonAnswer(status, answer, headers);
}

/**
 * What one client's feed carries: `coupons: false` (a client `authorize` does not let list coupons, a storefront)
 * gets the options only: no coupon record, no coupon deletion, no coupon confirmation, no issued coupon's uses.
 */
export interface FeedLists {
  coupons: boolean;
}

/** A snapshot position after every coupon (positions are `resource\0key`; `\1` sorts after any `coupons\0…`). */
const AFTER_COUPONS = 'coupons\u0001';

/** The confirmations a client's feed tells: without `coupons` for a client that may not list them. */
function confirmedFor(head: FeedHead, lists: FeedLists): FeedAnswer['confirmedAt'] {
  const out: FeedAnswer['confirmedAt'] = {};
  for (const [resource, at] of Object.entries(head.confirmedAt))
    if (at !== undefined && (lists.coupons || resource !== 'coupons')) out[resource] = at;
  return out;
}

const mustRefetch = (why: string): ProxyAnswer =>
  feedError(
    409,
    'must_refetch',
    `${why}: drop your cursor and version and start a snapshot again (GET relay/v1/feed without since); keep showing your local data until it is complete.`,
  );

/** A snapshot chunk the store could not give (its records, or the cursors' key). */
function unavailable(error: unknown): ProxyAnswer {
  const why = `the relay store could not be read: ${error instanceof Error ? error.message : String(error)}`;
  return feedError(
    503,
    'relay_unavailable',
    `RELAY UNAVAILABLE: ${why}. Keep using local data and try again shortly.`,
    {
      'retry-after': '5',
    },
  );
}

/** Changes compacted to each key's last state, in version order of those last states. */
function compact(changes: FeedChange[]): { upserts: FeedRecord[]; deletes: FeedDelete[] } {
  const last = new Map<string, FeedChange>();
  for (const c of changes) {
    const id = `${c.resource}\u0000${c.key}`;
    last.delete(id); // re-inserted: Map order follows the last change
    last.set(id, c);
  }
  const upserts: FeedRecord[] = [];
  const deletes: FeedDelete[] = [];
  for (const c of last.values()) {
    if (c.op === 'upsert') upserts.push({ resource: c.resource, key: c.key, record: c.record });
    else deletes.push({ resource: c.resource, key: c.key });
  }
  return { upserts, deletes };
}

/**
 * Answers one feed request.
 * @example const answer = await serveFeed(ctx, 'since=812&handle=h1&wait=30', req.headers['if-none-match'], signal);
 */
export async function serveFeed(
  ctx: FeedContext,
  search: string,
  ifNoneMatch: string | undefined,
  signal: AbortSignal,
  lists: FeedLists = { coupons: true },
): Promise<ProxyAnswer> {
  const q = parseFeedQuery(search, ctx.maxWaitSeconds);
  if (typeof q === 'string') return feedError(400, 'bad_request', `BAD REQUEST: ${q}.`);
  const { mirror } = ctx;
  let head = mirror.head();
  if (!head) {
    await mirror.catchUp();
    head = mirror.head();
  }
  if (!head) {
    const why = mirror.error() ?? 'the relay has not loaded its snapshot yet';
    return feedError(
      503,
      'relay_unavailable',
      `RELAY UNAVAILABLE: ${why}. Keep using local data and try again shortly.`,
      {
        'retry-after': '5',
      },
    );
  }
  const listed = (h: FeedHead): boolean => h.confirmedAt.coupons !== undefined;
  if (q.since === null && q.cursor === null && !listed(head) && q.waitMs > 0) {
    // a till may wait for it (`wait`): its snapshot is answered the moment the first listing is in
    await ctx.polls.wait(() => listed(mirror.head()!), q.waitMs, signal);
    head = mirror.head()!;
  }
  if (q.since === null && q.cursor === null && !listed(head)) {
    // a snapshot before the first listing would be an empty one: a till would take "no coupons" for the truth
    const why = ctx.degraded().error;
    const msg = `RELAY NOT READY: the relay has not finished its first listing of the shop yet${why ? ` (${why})` : ''}. Keep using local data and ask again after Retry-After.`;
    return feedError(503, 'relay_not_ready', msg, { 'retry-after': String(NOT_READY_RETRY_S) });
  }
  if (q.handle !== null && q.handle !== head.handle) {
    return mustRefetch(`this relay's history (${head.handle}) is not the one your version belongs to (${q.handle})`);
  }

  let state = ctx.degraded();
  /** A feed answer (docs/feed-protocol.md; its fields: the FeedAnswer schema of the shop API package). */
  const body = (
    current: FeedHead,
    fields: Pick<FeedAnswer, 'version' | 'kind' | 'cursor' | 'upserts' | 'deletes' | 'more'>,
  ): FeedAnswer => ({
    shop: ctx.shop,
    handle: current.handle,
    ...fields,
    products: mirror.products(),
    confirmedAt: confirmedFor(current, lists),
    relay: state,
  });
  // the state travels with a 304 too (a till that restarted holds an ETag, and no body tells it)
  const headers = (etag: string) => ({
    etag,
    'cache-control': 'no-cache',
    ...(state.degraded ? { 'x-shop-relay-degraded': 'true' } : {}),
  });
  const etag = (h: FeedHead, version = h.version) => feedEtag(h, version, state.degraded, lists.coupons);
  // what an answer's fields around its records depend on, besides the version: part of the cache key
  const envelopeKey = (current: FeedHead): string =>
    JSON.stringify([mirror.products(), current.confirmedAt, state, lists.coupons]);
  const mayHave = (r: { resource: string }) => lists.coupons || (r.resource !== 'coupons' && r.resource !== 'uses');

  if (q.since === null) {
    // a snapshot chunk, from this instance's copy; its content may be newer than the cursor's version (the till's
    // catch-up from that version re-applies what changed), never older: an earlier chunk came from an instance that
    // had seen a commit this one has not heard of yet (a load balancer spreads one till's requests)
    let cursor: SnapshotCursor | null = null;
    if (q.cursor !== null) {
      // checked before anything is read: a cursor the relay did not sign costs one HMAC, and keeps nothing
      let reading: Awaited<ReturnType<SnapshotCursors['read']>>;
      try {
        reading = await ctx.cursors.read(head.handle, q.cursor);
      } catch (error) {
        return unavailable(error);
      }
      if (!reading.ok && reading.why === 'stale')
        return mustRefetch('this cursor was handed out by an older release of the relay');
      if (!reading.ok)
        return feedError(
          400,
          'bad_request',
          'BAD REQUEST: cursor is not one this relay handed out; start the snapshot again without it.',
        );
      cursor = reading.cursor;
      if (q.limitAsked && chunkSize(q.limit) !== cursor.limit)
        return feedError(
          400,
          'bad_request',
          `BAD REQUEST: limit must stay the one this snapshot started with (${cursor.limit}), or be left out.`,
        );
    }
    if (cursor && cursor.version > head.version) {
      await mirror.catchUp();
      head = mirror.head()!;
      if (head.handle !== q.handle) return mustRefetch('this relay started a new history meanwhile');
      if (cursor.version > head.version)
        return mustRefetch(`this snapshot's version ${cursor.version} is newer than this relay's (${head.version})`);
    }
    const version = cursor?.version ?? head.version;
    // the relay's own chunk sizes: every till of a version reads the same few chunks
    const limit = cursor?.limit ?? chunkSize(q.limit);
    let after = cursor?.after ?? null;
    // without coupons the snapshot starts after them (they come first in position order)
    if (!lists.coupons && (after === null || after < AFTER_COUPONS)) after = AFTER_COUPONS;
    // every till reads the same chunks: each is serialised once per version of this instance's copy
    const key = `snapshot\0${head.handle}\0${head.version}\0${version}\0${after}\0${limit}\0${envelopeKey(head)}`;
    const current = head;
    return feedAnswerCache(mirror).get(key, async () => {
      // held: from this instance's copy (and kept for the next till); not held: read from the store each time
      const held = mirror.holds();
      let chunk: Awaited<ReturnType<FeedMirror['chunk']>>;
      let next: string | null;
      try {
        chunk = await mirror.chunk(after, limit);
        next = chunk.done ? null : await ctx.cursors.sign(current.handle, { version, limit, after: chunk.last ?? '' });
      } catch (error) {
        return { answer: unavailable(error), keep: false };
      }
      const fields = { version, kind: 'snapshot' as const, cursor: next, upserts: [], deletes: [], more: !chunk.done };
      const json = feedRecordsJson(body(current, fields), chunk.records.filter(mayHave));
      const answer = jsonTextAnswer(200, json, headers(etag(current, version)));
      // every till of this version gets these bytes: compressed once, and the large chunks (the ones engines read)
      // kept for the other instances
      const place = `${lists.coupons ? 'all' : 'options'}\0${limit}\0${after ?? ''}`;
      const kept = limit >= KEPT_CHUNK_SIZE ? ctx.chunks.of(place, answer.body) : undefined;
      return { answer: { ...answer, reused: { kept } }, keep: held };
    });
  }

  const since = q.since;
  if (since > head.version) {
    // the client saw a newer head on another instance: catch up before answering
    await mirror.catchUp();
    head = mirror.head()!;
    if (since > head.version) return mustRefetch(`version ${since} is newer than this relay's (${head.version})`);
  }
  const unchanged = (h: FeedHead): boolean =>
    ifNoneMatch !== undefined ? noneMatch(ifNoneMatch, etag(h)) : h.version <= since;
  if (unchanged(head) && q.waitMs > 0) {
    if (ctx.polls.full()) {
      // this instance holds as many long-polls as it may: the till polls again later (or another instance does)
      const msg = `RELAY BUSY: this relay instance holds ${ctx.polls.size()} long-polls, its limit; nothing changed since your version. Poll again after Retry-After.`;
      return feedError(503, 'relay_busy', msg, { 'retry-after': '5' });
    }
    await ctx.polls.wait(() => !unchanged(mirror.head()!), q.waitMs, signal);
    head = mirror.head()!;
    state = ctx.degraded(); // (it may have changed while the request waited)
    if (q.handle !== head.handle) return mustRefetch('this relay started a new history meanwhile');
  }
  if (noneMatch(ifNoneMatch, etag(head))) {
    return { status: 304, headers: headers(etag(head)), body: Buffer.alloc(0) };
  }
  if (since < head.oldest)
    return mustRefetch(`version ${since} is older than the change log this relay keeps (from ${head.oldest})`);

  // the tills woken by one change ask the same changes: the log is read and the answer made once for all of them
  const current = head;
  const key = `changes\0${head.handle}\0${head.version}\0${since}\0${q.limit}\0${envelopeKey(head)}`;
  return feedAnswerCache(mirror).get(key, async () => {
    let changes: FeedChange[] | null;
    if (since === current.version) changes = [];
    else {
      try {
        changes = await ctx.store.readChanges(since, q.limit);
      } catch {
        // degraded: no change log without the store; a new snapshot from this instance's copy is always possible
        return {
          answer: mustRefetch(
            `the relay cannot read its change log right now (${mirror.error() ?? 'store unreachable'})`,
          ),
          keep: false,
        };
      }
      if (changes === null)
        return { answer: mustRefetch(`version ${since} is older than the change log this relay keeps`), keep: true };
    }
    const version = changes.length > 0 ? changes[changes.length - 1]!.version : since;
    const more = changes.length >= q.limit;
    const { upserts, deletes } = compact(changes);
    const fields = {
      version,
      kind: 'changes' as const,
      cursor: null,
      upserts: upserts.filter(mayHave),
      deletes: deletes.filter(mayHave),
      more,
    };
    // (the tills woken by one change get one answer: compressed once for all of them)
    return {
      answer: { ...jsonAnswer(200, body(current, fields), headers(etag(current, version))), reused: {} },
      keep: true,
    };
  });
}
