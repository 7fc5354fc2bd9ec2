// One complete upstream listing of one resource (the coupons, or one product's options), staged page by page in
// the store under the sync lease, so any instance can resume it from the checkpoint. Applied only once complete
// and adding up, as the engine does: no key twice, the count matches data_count, deletions only then; a rejected
// record keeps its good copy, and a rejected record whose key cannot be read forbids deletions.
import { type ApiClient, type ApiError, type CheckedPage, retry, type RetryPolicy, ShopLookupError } from '@shop-lookup/shop-api';
import { recordHash } from './recordHash';
import type { FeedHead, Lease, ListingCheckpoint, RelayStore, ResourceId, StagedRecord } from '../store/relayStore';

/** A checkpoint older than this is not resumed: too much may have changed (as the engine). */
const CHECKPOINT_MAX_AGE_MS = 6 * 60 * 60 * 1000;
/** The listing changed under us this many times: give up for now, keep the last snapshot. */
const MAX_RESTARTS = 2;

export interface ListingDeps {
  store: RelayStore;
  client: ApiClient;
  now: () => number;
  retry: RetryPolicy;
  signal: AbortSignal;
  /** The lease held now (renewed by the caller meanwhile). */
  lease: () => Lease;
  /** Told after each staged page. */
  onPage?: (checkpoint: ListingCheckpoint) => void;
  /** Applied to each page's records before they are staged (the relay's redaction: nothing echoed is served). */
  scrub?: <T>(records: T) => T;
}

/** What a listing did. */
export interface ListingResult {
  head: FeedHead;
  upserts: number;
  deletes: number;
  rejected: number;
  /** A rejected record without a readable key: nothing was deleted. */
  deletionsSkipped: boolean;
}

function inconsistent(resource: ResourceId, what: string): ShopLookupError {
  return new ShopLookupError(
    'inconsistent_listing',
    `The ${resource} listing did not add up: ${what}. Nothing was deleted and the last complete data is kept; it is listed again on the next refresh.`,
  );
}

const productOf = (resource: ResourceId): number | undefined =>
  resource === 'coupons' ? undefined : Number(resource.slice('options:'.length));

/** A record's key in the feed: the coupon code, or the option number as text. */
export function keyOf(resource: ResourceId, record: unknown): string {
  const r = record as { coupon_code?: unknown; no?: unknown };
  return String(resource === 'coupons' ? r.coupon_code : r.no);
}

function fresh(resource: ResourceId, at: number): ListingCheckpoint {
  const listing = `${at.toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  return { resource, listing, startedAt: at, page: 0, totalPages: null, dataCount: null, unkeyed: 0, rows: 0 };
}

function changedUnder(cp: ListingCheckpoint, p: CheckedPage<unknown>): boolean {
  return (
    (cp.dataCount !== null && p.dataCount !== null && p.dataCount !== cp.dataCount) ||
    (cp.totalPages !== null && p.totalPages !== null && p.totalPages !== cp.totalPages)
  );
}

/**
 * Lists `resource` to the end (resuming a staged listing), then commits its diff. Throws when it could not be
 * completed; the snapshot then stays as it was (a staged listing is kept for resuming unless it did not add up).
 * @example const result = await listResource(deps, 'coupons');
 */
export async function listResource(deps: ListingDeps, resource: ResourceId): Promise<ListingResult> {
  const { store, client } = deps;
  const productNo = productOf(resource);
  const found = await store.readCheckpoint(resource);
  let cp = found && found.page > 0 && deps.now() - found.startedAt < CHECKPOINT_MAX_AGE_MS ? found : null;
  if (!cp) {
    await store.discardListing(resource);
    cp = fresh(resource, deps.now());
  }
  let restarts = 0;
  let rejected = 0;
  const fetchPage = (page: number): Promise<CheckedPage<unknown>> =>
    retry<CheckedPage<unknown>>(
      () => {
        const o = { priority: 'background' as const, signal: deps.signal };
        return productNo === undefined ? client.listCoupons(page, o) : client.listProductOptions(productNo, page, o);
      },
      deps.retry,
      { signal: deps.signal },
    );

  for (let page = cp.page + 1; ; page++) {
    let p: CheckedPage<unknown>;
    try {
      p = await fetchPage(page);
    } catch (error) {
      // the API does not know this product (any more): it has no options, a complete (empty) listing
      if (productNo === undefined || page > 1 || (error as ApiError).code !== 'not_found') throw error;
      cp = { ...cp, page: 1, totalPages: 1, dataCount: 0 };
      break;
    }
    if (changedUnder(cp, p)) {
      if (++restarts > MAX_RESTARTS) {
        await store.discardListing(resource);
        throw inconsistent(resource, 'it kept changing while it was being read');
      }
      await store.discardListing(resource);
      cp = fresh(resource, deps.now());
      page = 0;
      continue;
    }
    const records = deps.scrub ? deps.scrub(p.records) : p.records;
    const staged: StagedRecord[] = records.map((record) => ({
      key: keyOf(resource, record),
      record,
      hash: recordHash(record),
    }));
    let unkeyed: number = cp.unkeyed;
    for (const r of p.rejected) {
      rejected++;
      if (r.key === null) {
        unkeyed++;
        continue;
      }
      // a record failing its schema keeps its last good copy (or stays absent): staged as that copy
      const key = String(r.key);
      const good = await store.readRecord(resource, key);
      staged.push(good === null ? { key, record: null, hash: '' } : { key, record: good, hash: recordHash(good) });
    }
    cp = { ...cp, page, totalPages: p.totalPages, dataCount: p.dataCount, unkeyed, rows: (cp.rows ?? 0) + staged.length };
    await store.stagePage(cp, staged, deps.lease());
    deps.onPage?.(cp);
    const last = p.totalPages !== null ? page >= p.totalPages : p.rowsPath === 'data' || p.rowCount === 0;
    if (last) break;
  }

  const staged = await store.readStaged(resource);
  const rows = cp.rows ?? staged.size;
  if (staged.size !== rows) {
    await store.discardListing(resource);
    throw inconsistent(resource, `${rows - staged.size} key(s) were listed twice`);
  }
  if (cp.dataCount !== null && rows + cp.unkeyed !== cp.dataCount) {
    await store.discardListing(resource);
    throw inconsistent(resource, `${rows + cp.unkeyed} records were listed but the API counted ${cp.dataCount}`);
  }
  const hashes = await store.readHashes(resource);
  const upserts = [...staged.values()].filter((s) => s.record !== null && hashes.get(s.key) !== s.hash);
  const blind = cp.unkeyed > 0;
  const deletes = blind ? [] : [...hashes.keys()].filter((key) => !staged.has(key));
  // confirmed as of when the listing started: every record is at least that fresh
  const head = await store.commitListing({ resource, upserts, deletes, confirmedAt: cp.startedAt, lease: deps.lease() });
  await store.discardListing(resource);
  return { head, upserts: upserts.length, deletes: deletes.length, rejected, deletionsSkipped: blind };
}
