// GET {basePath}/relay/v1/feed (PROTOCOL.md): a snapshot in chunks, or the changes after a version; ETag and 304;
// a long-poll that answers as soon as the head moves past the client's, within its wait.
import { jsonAnswer, type ProxyAnswer } from '../proxy/proxyAnswers';
import type { FeedMirror } from './feedMirror';
import { encodeCursor, parseFeedQuery } from './feedQuery';
import type { LongPolls } from './longPolls';
import type { FeedChange, FeedHead, FeedRecord, RelayStore } from './relayStore';

export interface FeedContext {
  /** The shop this relay serves (its `shopId`), named in every answer: a till checks it against its database's. */
  shop: string;
  store: RelayStore;
  mirror: FeedMirror;
  polls: LongPolls;
  maxWaitSeconds: number;
  /** Whether the relay serves without its store or upstream, and why. */
  degraded(): { degraded: boolean; error: string | null };
}

/** The feed's error answer: `{ code, message }`. */
export function feedError(status: number, code: string, message: string, headers: Record<string, string> = {}): ProxyAnswer {
  return jsonAnswer(status, { code, message }, headers);
}

/**
 * `"<handle>.<version>.<newest confirmedAt>"`, and `.degraded` while the relay is: a till that holds the data sees
 * the relay's state change in a 200 answer (with its reason) instead of a 304.
 * @example etagOf(head, head.version, false) // '"m1x2-ab12.812.1763900000000"'
 */
function etagOf(head: FeedHead, version: number, degraded: boolean): string {
  const confirmed = Math.max(0, ...Object.values(head.confirmedAt).map((v) => v ?? 0));
  return `"${head.handle}.${version}.${confirmed}${degraded ? '.degraded' : ''}"`;
}

const mustRefetch = (why: string): ProxyAnswer =>
  feedError(409, 'must_refetch', `${why}: drop your cursor and version and start a snapshot again (GET relay/v1/feed without since); keep showing your local data until it is complete.`);

/** Changes compacted to each key's last state, in version order of those last states. */
function compact(changes: FeedChange[]): { upserts: FeedRecord[]; deletes: { resource: string; key: string }[] } {
  const last = new Map<string, FeedChange>();
  for (const c of changes) {
    const id = `${c.resource}\u0000${c.key}`;
    last.delete(id); // re-inserted: Map order follows the last change
    last.set(id, c);
  }
  const upserts: FeedRecord[] = [];
  const deletes: { resource: string; key: string }[] = [];
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
    return feedError(503, 'relay_unavailable', `RELAY UNAVAILABLE: ${why}. Keep using local data and try again shortly.`, {
      'retry-after': '5',
    });
  }
  if (q.handle !== null && q.handle !== head.handle) {
    return mustRefetch(`this relay's history (${head.handle}) is not the one your version belongs to (${q.handle})`);
  }

  let state = ctx.degraded();
  const body = (current: FeedHead, fields: Record<string, unknown>) => ({
    shop: ctx.shop,
    handle: current.handle,
    ...fields,
    products: mirror.products(),
    confirmedAt: current.confirmedAt,
    relay: state,
  });
  // the state travels with a 304 too (a till that restarted holds an ETag, and no body tells it)
  const headers = (etag: string) => ({ etag, 'cache-control': 'no-cache', ...(state.degraded ? { 'x-shop-relay-degraded': 'true' } : {}) });
  const etag = (h: FeedHead, version = h.version) => etagOf(h, version, state.degraded);

  if (q.since === null) {
    // a snapshot chunk, from this instance's copy
    const version = q.cursor?.version ?? head.version;
    const chunk = mirror.chunk(q.cursor?.after ?? null, q.limit);
    const cursor = chunk.done ? null : encodeCursor(version, chunk.last ?? '');
    return jsonAnswer(
      200,
      body(head, { version, kind: 'snapshot', cursor, upserts: chunk.records, deletes: [], more: !chunk.done }),
      headers(etag(head, version)),
    );
  }

  const since = q.since;
  if (since > head.version) {
    // the client saw a newer head on another instance: catch up before answering
    await mirror.catchUp();
    head = mirror.head()!;
    if (since > head.version) return mustRefetch(`version ${since} is newer than this relay's (${head.version})`);
  }
  const unchanged = (h: FeedHead): boolean => (ifNoneMatch !== undefined ? ifNoneMatch === etag(h) : h.version <= since);
  if (unchanged(head) && q.waitMs > 0) {
    await ctx.polls.wait(() => !unchanged(mirror.head()!), q.waitMs, signal);
    head = mirror.head()!;
    state = ctx.degraded(); // (it may have changed while the request waited)
    if (q.handle !== head.handle) return mustRefetch('this relay started a new history meanwhile');
  }
  if (ifNoneMatch !== undefined && ifNoneMatch === etag(head)) {
    return { status: 304, headers: headers(etag(head)), body: Buffer.alloc(0) };
  }
  if (since < head.oldest) return mustRefetch(`version ${since} is older than the change log this relay keeps (from ${head.oldest})`);

  let changes: FeedChange[] | null;
  if (since === head.version) changes = [];
  else {
    try {
      changes = await ctx.store.readChanges(since, q.limit);
    } catch {
      // degraded: no change log without the store; a new snapshot from this instance's copy is always possible
      return mustRefetch(`the relay cannot read its change log right now (${mirror.error() ?? 'store unreachable'})`);
    }
    if (changes === null) return mustRefetch(`version ${since} is older than the change log this relay keeps`);
  }
  const version = changes.length > 0 ? changes[changes.length - 1]!.version : since;
  const more = changes.length >= q.limit;
  const { upserts, deletes } = compact(changes);
  return jsonAnswer(
    200,
    body(head, { version, kind: 'changes', cursor: null, upserts, deletes, more }),
    headers(etag(head, version)),
  );
}
