// The local database (Dexie over IndexedDB). Versioned: a later schema adds a `version(n)` with an upgrade,
// so existing shops migrate instead of losing their offline data. Tokens and credentials are never stored here.
import Dexie, { type Table } from 'dexie';
import type { Coupon, IssuedCoupon, JournalEntry, ProductOption } from '../../src/protocol';
import type { FeedStageRow, FeedState } from './feedState';
import { refuseNewerSchema } from './refuseNewerSchema';

/**
 * The schema version this release declares last (below); a database at a later one is refused (refuseNewerSchema.ts).
 */
const SCHEMA_VERSION = 7;

/** When the API last confirmed a resource or an item (`coupons`, `coupon:<code>`, `options:<no>`, ...). */
export interface Confirmation {
  key: string;
  confirmedAt: number;
  /**
   * `coupon:<code>` only: the API answered this code with the coupon stored under another code (it matched, say,
   * without regard to case). Lookups of `code` follow it there.
   */
  code?: string;
}

/**
 * `coupon:<code>` (or `issued:<code>`) when the latest record the API sent for that code could not be read (it
 * failed the schema): the copy stored (if any) stays, but nothing confirms it any more. Lookups show it with
 * `confirmedAt`, when the API last confirmed that copy (null: never), whatever later listings say, and validateCoupon
 * answers `unreadable`, until a readable record arrives (unreadableMarks.ts).
 */
export interface UnreadableMark {
  key: string;
  confirmedAt: number | null;
  /** As on a Confirmation: the API answered this code with the coupon stored under another one. */
  code?: string;
  unreadable: {
    /** When the unreadable record arrived. */
    since: number;
    /** Why it could not be read, in words (the rejection's message). */
    message: string;
    /** The coupon listing that rejected it (absent: a read-through or the relay's feed). */
    listing?: string;
  };
}

/**
 * The coupon listing's checkpoint as the store sees it: a row under '@couponSync'. Its shape, states and transitions
 * are the sync's (worker/sync/direct/listingCheckpoint.ts), which reads it back as a `CouponCheckpoint`.
 */
interface ListingCheckpointRow {
  key: '@couponSync';
}

/** A changed coupon waiting in `couponStage`, with when the page that carried it was requested. */
export type StagedCoupon = Coupon & { '@fetchedAt'?: number };

/** Which listing was the last complete one (its page hashes in `couponHashes` describe what `coupons` holds). */
export interface CommittedListing {
  key: '@couponListing';
  listing: string;
}

/** Which shop this database belongs to: one shop's data never mixes into another's database. */
export interface ShopIdentity {
  key: '@shop';
  baseUrl: string;
  apiKey: string | null;
  /** The host's `shopId` (absent in databases claimed before it existed, or without one). */
  shopId?: string | null;
  /** The shop the relay at `baseUrl` names, recorded when the database was first filled from it (shopIdentity.ts). */
  relayShop?: string | null;
}

/**
 * This till's use of an issued coupon: an accepted "yes" for it, remembered until the API's record of the issued
 * coupon says it was used (the shop's order system recorded a use), so a second sale on this till is not a plain
 * "yes" meanwhile (worker/coupon/repeatUseRule.ts). Written with its journal entry, in one transaction; clearing the
 * journal leaves it (clear({ discardJournal: true }) drops it).
 */
export interface TillUse {
  /** The key of the journal entry of the sale (JournalEntry.key). */
  key: string;
  /**
   * The device that accepted it (deviceId.ts). Absent in rows of schema version 6, whose uses were never sent: the
   * first send puts them in the outbox (shareUses.ts) and fills it in.
   */
  device?: string;
  /** The issued coupon's code, as the journal has it. */
  code: string;
  /** The journal entry's id. */
  journalId: number;
  /** When the verdict was given. */
  at: number;
  orderId: string | null;
  orderAt: number;
  amount: number;
}

/**
 * One use of an issued coupon this till accepted, waiting to be sent to the relay (POST relay/v1/uses, as one item of
 * its `uses`): written with its journal entry, in one transaction, deleted once the relay acknowledged it. Kept when
 * the journal is cleared (the shop's other tills still need to hear of it) and by clear() (unless
 * `discardJournal`), under the device that accepted it.
 */
export interface OutgoingUse {
  /** The journal entry's key. */
  entry: string;
  /** The device (this database's id when the use was accepted: deviceId.ts). */
  device: string;
  code: string;
  couponCode: string | null;
  orderId: string | null;
  /** When the till accepted it, epoch ms. */
  at: number;
  /** An override (`acceptRepeatUse`) let it through. */
  override: boolean;
  /**
   * A release (`releaseCoupon`, a voided sale), not a use: the journal key of the use it gives back (`entry` is the
   * release's own journal entry). Sent after the uses.
   */
  release?: string;
  /**
   * When an online verdict sent this use as a claim (its answer settles it): the sender leaves it alone for a while,
   * so the use is not sent beside its own claim.
   */
  claiming?: number;
}

/** What the relay said to a claim (usesSender.ts), as the checkout reads it. */
export type ClaimAnswer =
  | { claim: 'granted' }
  | { claim: 'refused'; first: { till: string; device: string; at: number; orderId: string | null } }
  | { claim: 'timeout' }
  | { claim: 'failed'; error: unknown }
  /** No claim was made: the till syncs from no relay that takes its uses (or is offline). */
  | { claim: null };

/** One use of an issued coupon as the relay's feed tells it (resource `uses`; docs/feed-protocol.md). */
interface SharedUse {
  /** The till's name on the relay (its token's), else its device id. */
  till: string;
  device: string;
  entry: string;
  orderId: string | null;
  at: number;
  receivedAt: number;
  override: boolean;
  /** A later sale of a code another sale used first (not the same device and order). */
  conflict: boolean;
}

/** The uses of one issued coupon every till of the shop reported and the API has not confirmed (the feed's `uses`). */
export interface SharedUses {
  code: string;
  couponCode: string | null;
  /** By `at`, then `receivedAt`. */
  uses: SharedUse[];
}

/** This database's device id: made once, kept across reloads, made again after clear() emptied `meta` (deviceId.ts). */
export interface DeviceRow {
  key: '@device';
  id: string;
}

/** The products whose options every full sync lists, shop-wide (trackedProducts.ts reads and writes it). */
export interface TrackedProducts {
  key: '@products';
  products: number[];
}

/**
 * A complete coupon listing came back empty while coupons were stored: nothing was deleted. The next complete
 * listing confirms it (empty again: then they go) or ends the question (any coupon listed); see syncCoupons.
 */
export interface EmptyListing {
  key: '@emptyListing';
  /** When that listing started. */
  at: number;
}

/**
 * Stored coupons the last complete listing did not list and that are not confirmed gone (too many to ask for one
 * by one, or its pages skipped): the next complete listing that does not list them either confirms them gone.
 * See listingEnd (packages/shop-api/src/api/unlistedRecords.ts).
 */
export interface UnlistedSuspects {
  key: '@unlisted';
  codes: string[];
  /** When that listing started. */
  at: number;
}

/**
 * The till's clock against the API's, as last measured (serverClock.ts): kept beside the data so a till restarted
 * offline still judges periods and data ages by the API's time (clockOffset.ts).
 */
export interface ClockOffsetRow {
  key: '@clock';
  /** How far the till's clock was ahead of the API's, ms (negative: behind). */
  offsetMs: number;
  /** When it was measured, by the API's time (epoch ms). */
  measuredAt: number;
}

export type MetaRow =
  | Confirmation
  | UnreadableMark
  | ListingCheckpointRow
  | CommittedListing
  | ShopIdentity
  | TrackedProducts
  | FeedState
  | EmptyListing
  | UnlistedSuspects
  | ClockOffsetRow
  | DeviceRow;

/**
 * The codes of one listed page of the running coupon sync. A unique index over all of them finds a code listed
 * twice, and the coupons no page listed (deletions), in IndexedDB rather than in a set of every code in memory.
 */
export interface ListedPage {
  page: number;
  codes: string[];
}

/**
 * A hash of one listed page's raw rows, and the listing it was stored by. When a re-sync gets a page whose rows
 * hash the same as in the committed listing, nothing on it changed: it is neither validated nor diffed again.
 * `hash` is null for a page with rejected rows (those are validated and reported every time).
 */
export interface PageHash {
  page: number;
  hash: string | null;
  listing: string;
  /**
   * The version of the record readers that read the page (RECORD_READERS_VERSION). A hash counts only under the
   * readers of today: after a reader change every page is read once more. Absent in rows of earlier builds.
   */
  readers?: number;
  /**
   * The page's codes, kept while a re-sync matches (listedPages is filled from them once the listing differs): as
   * the text of a JSON array, which clones and stores for a fraction of a hundred strings' cost. Absent in rows of
   * pages whose codes are kept elsewhere and in rows of builds before version 3's codes; an array in rows of the
   * builds between (read both).
   */
  codes?: string | string[];
}

export class ShopDatabase extends Dexie {
  coupons!: Table<Coupon, string>;
  /** Keyed by the code the issued coupon was looked up with (outbound key). */
  issuedCoupons!: Table<IssuedCoupon, string>;
  options!: Table<ProductOption, [number, number]>;
  meta!: Table<MetaRow, string>;
  /** Changed coupons of a running re-sync; readers keep seeing `coupons` until the listing is complete. */
  couponStage!: Table<StagedCoupon, string>;
  /** The codes of each listed page of the running listing (version 3; `couponPages` before, without the index). */
  listedPages!: Table<ListedPage, number>;
  /** Raw-row hashes of the listed pages (version 3). */
  couponHashes!: Table<PageHash, number>;
  /** Journaled verdicts (version 2; keyed entries with their context, version 6). */
  journal!: Table<JournalEntry, number>;
  /** This till's uses of issued coupons the API has not confirmed yet (version 6). */
  tillUses!: Table<TillUse, string>;
  /** Uses of issued coupons this till accepted that the relay has not acknowledged yet (version 7). */
  outbox!: Table<OutgoingUse, string>;
  /** The shop's uses of issued coupons as the relay's feed tells them, by code (version 7). */
  sharedUses!: Table<SharedUses, string>;
  /** A relay snapshot being built aside while the last good data keeps answering (version 5; see feedState.ts). */
  feedStage!: Table<FeedStageRow, [string, string]>;

  /** The IDBKeyRange of this database's IndexedDB (a lookup's plain requests build their ranges with it). */
  readonly keyRange: typeof IDBKeyRange;

  constructor(
    name: string,
    deps: { indexedDB?: IDBFactory | undefined; IDBKeyRange?: typeof IDBKeyRange | undefined },
  ) {
    const options: ConstructorParameters<typeof Dexie>[1] = {};
    const factory = deps.indexedDB ?? Dexie.dependencies.indexedDB;
    if (factory) options.indexedDB = refuseNewerSchema(factory, SCHEMA_VERSION);
    if (deps.IDBKeyRange) options.IDBKeyRange = deps.IDBKeyRange;
    super(name, options);
    this.keyRange = deps.IDBKeyRange ?? Dexie.dependencies.IDBKeyRange;
    this.version(1).stores({
      coupons: 'coupon_code',
      issuedCoupons: '',
      options: '[product_no+no], [product_no+code]',
      meta: 'key',
      couponStage: 'coupon_code',
      couponPages: 'page',
    });
    // version 2 adds the offline verdict journal; existing data stays as it is
    this.version(2).stores({ journal: '++id, at' });
    // version 3: the page hashes that let a re-sync skip unchanged pages (none trusted yet), and the listed codes
    // under a unique index. A listing left unfinished by version 2 starts over: its codes are not carried across.
    this.version(3)
      .stores({ couponHashes: 'page', listedPages: 'page, &*codes', couponPages: null })
      .upgrade(async (tx) => {
        await tx.table('meta').delete(metaKey.couponSync);
        await tx.table('couponStage').clear();
      });
    // version 5: the relay feed's staging table (version 4 is left to another change; Dexie accepts the gap)
    this.version(5).stores({ feedStage: '[resource+key]' });
    // version 6: every journal entry has a key of its own (unique), so writing it again is harmless, and this
    // till's uses of issued coupons (TillUse). Entries kept from before are left as they are: the journal reads
    // them with what their release did not record (offlineJournal.ts)
    this.version(6).stores({ journal: '++id, at, &key', tillUses: 'key, code' });
    // version 7: the uses shared through a relay (the outbox, the shop's uses by code) and the journal's conflicts
    // (indexed: only entries that have one). This till's uses from before reach the outbox at the first send
    // (shareUses.ts): an upgrade here would weigh on every first load
    this.version(SCHEMA_VERSION).stores({
      journal: '++id, at, &key, conflict.at',
      outbox: 'entry, code',
      sharedUses: 'code',
    });
  }
}

/** @example const db = openStore('shop-lookup', { indexedDB, IDBKeyRange }); */
export function openStore(
  name: string,
  deps: { indexedDB?: IDBFactory | undefined; IDBKeyRange?: typeof IDBKeyRange | undefined } = {},
): ShopDatabase {
  // Dexie's liveQuery silently never runs unless Dexie.dependencies has an indexedDB, which it reads from the
  // global at import. Where the platform has none (Node) and the host passed one, lend it ours.
  if (!Dexie.dependencies.indexedDB && deps.indexedDB) {
    Dexie.dependencies.indexedDB = deps.indexedDB;
    if (deps.IDBKeyRange) Dexie.dependencies.IDBKeyRange = deps.IDBKeyRange;
  }
  return new ShopDatabase(name, deps);
}

/** All options of one product, in option-number order. */
export function productRange(db: ShopDatabase, productNo: number) {
  return db.options.where('[product_no+no]').between([productNo, Dexie.minKey], [productNo, Dexie.maxKey]);
}

/** Meta keys, in one place so readers and writers agree. */
export const metaKey = {
  coupons: 'coupons',
  coupon: (code: string) => `coupon:${code}`,
  issued: (code: string) => `issued:${code}`,
  options: (productNo: number) => `options:${productNo}`,
  optionNo: (productNo: number, no: number) => `option:${productNo}:no:${no}`,
  optionCode: (productNo: number, code: string) => `option:${productNo}:code:${code}`,
  couponSync: '@couponSync',
  couponListing: '@couponListing',
  emptyListing: '@emptyListing',
  unlisted: '@unlisted',
  shop: '@shop',
  products: '@products',
  clock: '@clock',
} as const;

/** Records that the API confirmed these keys at `at`. */
export function confirm(db: ShopDatabase, keys: string[], at: number) {
  return db.meta.bulkPut(keys.map((key) => ({ key, confirmedAt: at })));
}

/**
 * The latest confirmation among `rows`, or null. An unreadable mark among them decides alone: the listing that
 * carried the unreadable record confirms nothing of the copy kept.
 */
export function latestConfirmation(rows: (MetaRow | undefined)[]): number | null {
  let latest: number | null = null;
  for (const r of rows) {
    if (r && 'unreadable' in r) return r.confirmedAt;
    if (r && 'confirmedAt' in r && r.confirmedAt !== null && (latest === null || r.confirmedAt > latest))
      latest = r.confirmedAt;
  }
  return latest;
}
