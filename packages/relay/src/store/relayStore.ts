// The one small interface between the relay and where it keeps its state: the embedded in-memory store and the
// Redis store both implement it and pass the same contract tests. Types only. Everything the relay shares between
// its instances goes through here: the snapshot and its per-record hashes, the version and the bounded change log,
// the listing checkpoint and its staged pages, the shop-wide tracked products, the upstream token, the upstream rate
// limit, the sync lease, and the wake-up signal for long-polls.
import type { FeedRecord as WireFeedRecord, RateLimiter, UsesRecord } from '@shop-lookup/shop-api';
import type { UsesDrop, UsesDropped } from './useDrops';
import type { UsesCommit, UsesMerged, UsesOutcome } from './useRecords';

/**
 * A feed resource: the coupons, the options of one product ('options:13805'), or the issued coupons' uses the tills
 * reported (`uses`, keyed by issued code; never listed from the API).
 */
export type ResourceId = 'coupons' | `options:${number}` | 'uses';

/**
 * One record as the feed carries it (the wire's FeedRecord, of a resource of this relay's). `key`: coupon_code for
 * coupons, String(no) for options, the issued code for uses; `record`: as validated by the relay, JSON-clonable.
 */
export interface FeedRecord extends WireFeedRecord {
  resource: ResourceId;
  /**
   * The record's JSON as the store keeps it, when it has it (the Redis store's snapshot chunks: `record` is then
   * parsed from it when first read): a feed answer sends it as it is, not parsed and serialised again.
   */
  json?: string;
}

/** One entry of the change log. Versions are shop-wide: one counter for every resource of the shop. */
export interface FeedChange {
  version: number;
  resource: ResourceId;
  key: string;
  op: 'upsert' | 'delete';
  /** The new record, for upserts. */
  record?: unknown;
}

/** Where the feed stands. */
export interface FeedHead {
  /**
   * Names this feed's history. A new one is made when the history is lost (a fresh in-memory store, a flushed
   * Redis): a till holding another handle must start again from a snapshot.
   */
  handle: string;
  /** Version of the newest change; 0 before the first listing was applied. Only ever grows. */
  version: number;
  /** The oldest `since` that changes can still be answered for (older: start again). */
  oldest: number;
  /** When each resource's last complete upstream listing ended (ms); absent: never listed. */
  confirmedAt: Partial<Record<ResourceId, number>>;
}

/** A record of a listing on its way in, with the hash the diff compares. */
export interface StagedRecord {
  key: string;
  record: unknown;
  /** Hash of the record's canonical JSON: equal hash, unchanged record. */
  hash: string;
}

/** Where an upstream listing of one resource stands, so any instance can resume it after the lister died. */
export interface ListingCheckpoint {
  resource: ResourceId;
  /** Names this listing; staged pages belong to it. */
  listing: string;
  startedAt: number;
  /** Last page completely staged (0: none yet). */
  page: number;
  totalPages: number | null;
  dataCount: number | null;
  /** Rows rejected by the schema whose key could not be read: they forbid deletions in this listing. */
  unkeyed: number;
  /**
   * Optional, set by the relay, kept by stores as given: rows staged so far counting repeats, so a key listed twice
   * (rows > readStaged().size) is seen even by an instance that resumes the listing.
   */
  rows?: number;
  /**
   * Optional, set by the relay, kept by stores as given: keys the previous complete listing did not list and that
   * are not confirmed gone; this listing deletes those it does not list either (listingEnd in unlistedRecords.ts).
   */
  suspects?: string[];
}

/** A held lease: who holds it and until when. */
export interface Lease {
  name: string;
  owner: string;
  /** Fencing token: grows with every new holder; a write under an older token is refused. */
  token: number;
  expiresAt: number;
}

/** The diff of one complete listing, applied at once under the lease. */
export interface ListingCommit {
  resource: ResourceId;
  upserts: StagedRecord[];
  deletes: string[];
  /** When the listing ended: becomes head.confirmedAt[resource], also when nothing changed. */
  confirmedAt: number;
  /** The lease the listing ran under: the commit is refused (`lease_lost`) if another instance holds it now. */
  lease: Lease;
}

/** Records of the snapshot after a position (RelayStore.readChunk). */
export interface SnapshotChunk {
  records: FeedRecord[];
  last: string | null;
  done: boolean;
  handle: string;
}

/** The store's own health, for status and for the relay's "degraded" answers. */
export interface StoreHealth {
  ok: boolean;
  /** Why not, in words an operator can act on (e.g. "Redis at redis://127.0.0.1:6390 is unreachable: ECONNREFUSED"). */
  error: string | null;
  /** ms of the last change of `ok`. */
  since: number;
}

/**
 * Refused requests counted per client (the door's refusal bound, door/refusalBounds.ts), shared by every instance on
 * the store. `blocked` is what this instance knows without a round trip; `refused` counts one and resolves with the
 * seconds to wait when it was past the bound (else 0); `admitted` the same for a request that was let through.
 */
export interface RefusalCount {
  blocked(clientId: string): number;
  refused(clientId: string): Promise<number>;
  admitted(clientId: string): Promise<number>;
}

/**
 * Records and changes handed out by a store are the caller's to read, not to change: the memory store hands out
 * the same (frozen) objects to every reader.
 */
export interface RelayStore {
  /** 'memory' or 'redis'. */
  readonly kind: 'memory' | 'redis';

  // -- the feed: snapshot, version, change log --
  head(): Promise<FeedHead>;
  /**
   * Records of the current snapshot (every resource), a chunk at a time. `cursor` is opaque (null: from the start);
   * `next` null: this was the last chunk. A record may appear twice across chunks (Redis HSCAN): readers dedupe by
   * resource + key.
   */
  readSnapshot(cursor: string | null, limit: number): Promise<{ records: FeedRecord[]; next: string | null }>;
  /**
   * Records of the current snapshot after the position `after` (`resource\0key`, the feed's snapshot positions;
   * null: from the start), in position order, at most `limit`; `last`: the position of the last one handed out
   * (`after` when none), `done`: nothing follows it; `handle`: the history these records belong to (a reader holding
   * another head must not hand them out under it). What a relay serving a shop straight from the store answers
   * with, without a copy of the shop in memory. Optional (both stores here have it): a relay given a store without
   * it keeps its shop in memory, as a single-shop relay always does.
   */
  readChunk?(after: string | null, limit: number): Promise<SnapshotChunk>;
  /** Changes with version > since, oldest first, at most `limit`; null when since < head.oldest (start again). */
  readChanges(since: number, limit: number): Promise<FeedChange[] | null>;
  /** Every record key of one resource with its hash: what a complete listing is diffed against. */
  readHashes(resource: ResourceId): Promise<Map<string, string>>;
  /** One record of the snapshot, or null. */
  readRecord(resource: ResourceId, key: string): Promise<unknown | null>;
  /** Applies a listing's diff in one atomic step: new version(s), log entries, snapshot, hashes, confirmedAt. */
  commitListing(commit: ListingCommit): Promise<FeedHead>;

  // -- the issued coupons' uses the tills reported: the `uses` resource of the feed --
  /**
   * Records the uses (claims, releases) of several POSTs in one atomic step, in order: each changed code's record
   * upserted or deleted (a version each), in the same step as the feed change, with each till's count and when the
   * relay heard from it. Idempotent by (device, entry). A batch that would take the shop past `commit.max` uses drops
   * the codes expired before `commit.expiredBefore` first; still past it, it is `full`; one that would take its till
   * past `commit.maxPerTill`, `tillFull`. A code no record held before is checked with the shop API later
   * (`uncheckedUses`) unless `commit.known` names it.
   */
  commitUses(commit: UsesCommit): Promise<{ outcomes: UsesOutcome[]; head: FeedHead; counts: UsesMerged['counts'] }>;
  /**
   * Drops uses (useDrops.ts): the codes' (or, with `till`, that till's), as `why` says (a confirmation keeps a mark,
   * an unknown code counts against its tills), and with `expiredBefore` every code whose newest use was received
   * before it (the sweep: also forgets the tills not heard from since). Returns the codes whose record changed and
   * how many uses went.
   */
  dropUses(drop: UsesDrop): Promise<UsesDropped>;
  /** Notes a request of `till` at `at` (its feed requests: what bounds its uses' times, tillHeard.ts). */
  hearTill(till: string, at: number): Promise<void>;
  /**
   * Codes of uses whose code the relay has not seen the shop API answer for, first recorded before `before`, oldest
   * first, at most `limit`.
   */
  uncheckedUses(before: number, limit: number): Promise<string[]>;
  /** The shop API answered for these codes (they exist): they are not checked again. */
  checkedUses(codes: string[]): Promise<void>;
  /**
   * The `uses` records of `codes` (else every one), with only `till`'s uses when given (records without any left
   * out), at most `limit` records: what an operator lists.
   */
  listUses(filter: { till?: string | undefined; codes?: string[] | undefined; limit: number }): Promise<UsesRecord[]>;

  // -- the running listing, resumable by any instance --
  readCheckpoint(resource: ResourceId): Promise<ListingCheckpoint | null>;
  /** Stores one page's records and the checkpoint that says it is stored, atomically. */
  stagePage(checkpoint: ListingCheckpoint, records: StagedRecord[], lease: Lease): Promise<void>;
  /** Every record staged by the running listing of `resource` (keyed; a key staged twice is an inconsistency). */
  readStaged(resource: ResourceId): Promise<Map<string, StagedRecord>>;
  /** Drops the running listing of `resource`: its checkpoint and staged records. */
  discardListing(resource: ResourceId): Promise<void>;

  // -- shop-wide tracked products (persisted), each with when a client last asked for it --
  trackedProducts(): Promise<number[]>;
  /**
   * Adds to the set and stamps every given product as asked for at `at` (default now); returns the products that
   * were new. With `max`: when the new ones would grow the set past `max`, none of them is added and it throws
   * `too_many_products` (the ones already tracked are still stamped).
   */
  trackProducts(productNos: number[], options?: { at?: number; max?: number }): Promise<number[]>;
  /**
   * Drops the tracked products last asked for before `at` (a product tracked without a stamp counts as asked now),
   * except those in `keep`; returns the ones dropped. A product asked for again meanwhile is not dropped.
   */
  dropProductsAskedBefore(at: number, keep: readonly number[]): Promise<number[]>;

  // -- coordination between instances --
  /** Takes the lease `name` for `owner` if free or expired; null when another owner holds it. */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<Lease | null>;
  /**
   * Extends a held lease; null when it was lost: expired (even if nobody took it yet) or taken. Writes under a lost
   * lease (commitListing, stagePage) are refused with `code: 'lease_lost'`.
   */
  renewLease(lease: Lease, ttlMs: number): Promise<Lease | null>;
  releaseLease(lease: Lease): Promise<void>;
  /** The shared upstream token (null: none yet). */
  readToken(): Promise<string | null>;
  writeToken(token: string): Promise<void>;
  /** Forgets `token` unless another instance already replaced it. */
  dropToken(token: string): Promise<void>;
  /**
   * The upstream rate limiter shared by every instance on this store (list 1/s, other 5/s by default), in the
   * engine's RateLimiter interface so the API client takes it as is.
   */
  rateLimiter(limits: { list: number; other: number } | false): RateLimiter;
  /**
   * Refused requests counted per client for every instance on this store, `perMinute` a minute. Optional: without it
   * (the memory store) each relay counts in its own memory.
   */
  refusals?(perMinute: number): RefusalCount;
  /** Called whenever the head changes on any instance (pub/sub), to wake long-polls. Returns unsubscribe. */
  onHeadChange(listener: (head: FeedHead) => void): () => void;

  // -- compressed snapshot chunks, for every instance (feed/keptChunks.ts) --
  /**
   * The bytes kept in `slot` if they were kept for `digest` (the body they encode), else null. Optional: without it
   * each instance compresses the chunks its tills ask for itself.
   */
  readKeptBody?(slot: string, digest: string): Promise<Buffer | null>;
  /**
   * Keeps `bytes` in `slot` for `digest`, replacing what the slot held (an older version's chunk); a store may let
   * them go (memory bounds, expiry): a reader then compresses again. Both stores keep at most STORE_DEFAULTS.maxKeptBytes
   * (defaults.ts; or their `maxKeptBytes`), the oldest kept going first.
   */
  keepBody?(slot: string, digest: string, bytes: Buffer): Promise<void>;

  // -- the key snapshot cursors are signed with (feed/snapshotCursors.ts), the same for every instance --
  /**
   * 32 random bytes made once per feed history and shared by every instance on the store. Optional: without it
   * the relay derives a key from the shop's API secret.
   */
  cursorKey?(): Promise<Buffer>;

  health(): StoreHealth;
  onHealthChange(listener: (health: StoreHealth) => void): () => void;
  close(): Promise<void>;
}
