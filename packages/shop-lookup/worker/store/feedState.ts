// Where this database stands on the relay's feed: the handle and version its data is at, the ETag of that, and a
// snapshot being read (its cursor), so an interrupted snapshot resumes at its next chunk. Kept in `meta`.
import type { ShopDatabase } from './store';

export const FEED_STATE_KEY = '@relayFeed';

/** A snapshot being read from the relay. */
export interface SnapshotProgress {
  handle: string;
  /** The version the snapshot started at; then the version its catch-up (`since=`) reached. */
  version: number;
  /** The next chunk's cursor; null once every chunk is in (the catch-up runs then). */
  cursor: string | null;
  /** 'direct': into empty tables (nothing to protect); 'staged': into feedStage, swapped in once complete. */
  mode: 'direct' | 'staged';
  /** Records stored so far (progress). */
  done: number;
}

export interface FeedState {
  key: typeof FEED_STATE_KEY;
  /** The feed the local data came from; null: no relay data applied yet. */
  handle: string | null;
  version: number | null;
  /** The ETag of the answer that brought the data to `version` (sent as If-None-Match). */
  etag: string | null;
  snapshot: SnapshotProgress | null;
}

/** One record of a staged snapshot: `resource` ('coupons', 'options:13805') and its key in the feed. */
export interface FeedStageRow {
  resource: string;
  key: string;
  /** null: the snapshot's record was rejected and no copy was held (nothing goes live for it). */
  record: unknown;
  /** The snapshot's record was rejected: this is the copy held before, which stays unconfirmed (unreadableMarks.ts). */
  kept?: true;
}

const EMPTY_FEED_STATE: FeedState = { key: FEED_STATE_KEY, handle: null, version: null, etag: null, snapshot: null };

/** @example const state = await loadFeedState(db); if (state.version !== null) askSince(state.version); */
export async function loadFeedState(db: ShopDatabase): Promise<FeedState> {
  const row = (await db.meta.get(FEED_STATE_KEY)) as FeedState | undefined;
  return row ?? EMPTY_FEED_STATE;
}
