// The feed's query, read strictly: a garbage since, cursor, limit or wait is a 400 with the reason, never a guess.
import { cursorForm } from './snapshotCursors';

export interface FeedQuery {
  since: number | null;
  handle: string | null;
  /** A snapshot cursor as given (snapshotCursors.ts reads and checks it). */
  cursor: string | null;
  waitMs: number;
  limit: number;
  /** Whether the request named its `limit` (a snapshot's next chunks take the cursor's otherwise). */
  limitAsked: boolean;
}

const DEFAULT_FEED_LIMIT = 5_000;
const MAX_FEED_LIMIT = 10_000;
const WHOLE = /^[0-9]{1,15}$/;
const HANDLE = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Reads the feed's query string; a string says what is wrong.
 * @example parseFeedQuery('since=812&handle=h1&wait=30', 60) // { since: 812, handle: 'h1', cursor: null, waitMs:
 * 30000, limit: 5000, limitAsked: false }
 */
export function parseFeedQuery(search: string, maxWaitSeconds: number): FeedQuery | string {
  const params = new URLSearchParams(search);
  for (const name of ['since', 'handle', 'cursor', 'wait', 'limit']) {
    if (params.getAll(name).length > 1) return `${name} is given more than once`;
  }
  const q: FeedQuery = {
    since: null,
    handle: params.get('handle'),
    cursor: null,
    waitMs: 0,
    limit: DEFAULT_FEED_LIMIT,
    limitAsked: false,
  };
  if (q.handle !== null && !HANDLE.test(q.handle)) return 'handle is not one this relay hands out';
  const since = params.get('since');
  if (since !== null) {
    if (!WHOLE.test(since))
      return `since must be a version (a whole number), got ${JSON.stringify(since.slice(0, 40))}`;
    q.since = Number(since);
  }
  const cursor = params.get('cursor');
  if (cursor !== null) {
    if (cursorForm(cursor) === null)
      return 'cursor is not one this relay handed out; start the snapshot again without it';
    q.cursor = cursor;
  }
  if (q.since !== null && q.cursor !== null) return 'since and cursor cannot be combined';
  if ((q.since !== null || q.cursor !== null) && q.handle === null)
    return 'since and cursor need the handle they came with';
  const wait = params.get('wait');
  if (wait !== null) {
    if (!/^[0-9]{1,5}$/.test(wait)) return `wait must be whole seconds, got ${JSON.stringify(wait.slice(0, 40))}`;
    if (Number(wait) > maxWaitSeconds) return `wait must be at most ${maxWaitSeconds} seconds, got ${wait}`;
    q.waitMs = Number(wait) * 1000;
  }
  const limit = params.get('limit');
  if (limit !== null) {
    if (!/^[0-9]{1,6}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_FEED_LIMIT) {
      return `limit must be a whole number from 1 to ${MAX_FEED_LIMIT}, got ${JSON.stringify(limit.slice(0, 40))}`;
    }
    q.limit = Number(limit);
    q.limitAsked = true;
  }
  return q;
}
