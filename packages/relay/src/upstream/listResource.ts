// One complete upstream listing of one resource (the coupons, or one product's options), staged page by page in
// the store under the sync lease, so any instance can resume it from the checkpoint. Applied only once complete
// and adding up, as the engine does: no key twice, the count matches data_count (else it is listed again); a
// stored record it did not list is deleted only once confirmed gone (listingEnd: its GET, or a second listing); a
// rejected record keeps its good copy, and a rejected record whose key cannot be read forbids deletions.
import {
  askUnlisted,
  confirmationBound,
  emptyAnswers,
  listingEnd,
  type ApiClient,
  type ApiError,
  type CheckedPage,
  type Coupon,
  retry,
  type RetryPolicy,
  ShopLookupError,
} from '@shop-lookup/shop-api';
import { recordHash } from './recordHash';
import type { FeedHead, Lease, ListingCheckpoint, RelayStore, ResourceId, StagedRecord } from '../store/relayStore';

/** A checkpoint older than this is not resumed: too much may have changed (as the engine). */
const CHECKPOINT_MAX_AGE_MS = 6 * 60 * 60 * 1000;
/** The listing changed under us (or did not add up, or must be listed again) this many times: give up for now,
 * keep the last snapshot. */
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
function keyOf(resource: ResourceId, record: unknown): string {
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
 * What a complete listing that adds up does with the stored keys it did not list (listingEnd, as the engine): a
 * few coupons are asked for by their GET; many (or options, whose single GET cannot be told to read a number
 * rather than a code) wait for a second listing that does not list them either. `relist` or what the commit
 * deletes and keeps.
 */
async function settleUnlisted(
  deps: ListingDeps,
  cp: ListingCheckpoint,
  unlisted: string[],
  mayRelist: boolean,
): Promise<{ gone: string[]; kept: StagedRecord[] } | { relist: string[] } | { stop: string }> {
  const { client } = deps;
  const asked = emptyAnswers<Coupon>();
  const get = (code: string) =>
    retry(() => client.getCoupon(code, { priority: 'background', signal: deps.signal }), deps.retry, {
      signal: deps.signal,
    });
  const facts = {
    unlisted,
    suspects: new Set(cp.suspects ?? []),
    bound: confirmationBound(cp.totalPages ?? cp.page),
    mayRelist,
  };
  for (;;) {
    const unaskable = cp.resource !== 'coupons' || asked.refused !== null;
    const end = listingEnd({ ...facts, answers: asked.answers, unaskable });
    if (end.step === 'confirm') {
      await askUnlisted(end.ask, get, (c) => c.coupon_code, asked, deps.signal);
      continue;
    }
    if (end.step !== 'commit') {
      return end.step === 'relist'
        ? { relist: end.suspects }
        : { stop: `${end.why}, and it kept changing while it was listed again` };
    }
    // found by their GET though three listings left them out: kept as it answered (an unreadable one as it was)
    const kept = end.kept.flatMap((key): StagedRecord[] => {
      const found = asked.kept.get(key);
      if (!found) return [];
      const record = deps.scrub ? deps.scrub(found) : found;
      return [{ key, record, hash: recordHash(record) }];
    });
    return { gone: end.gone, kept };
  }
}

/**
 * Lists `resource` to the end (resuming a staged listing), then commits its diff. A listing that does not add up,
 * or whose pages skipped a record, is listed again (twice at most), never applied. Throws when it could not be
 * completed; the snapshot then stays as it was (a staged listing is kept for resuming unless it did not add up).
 * @example const result = await listResource(deps, 'coupons');
 */
export async function listResource(deps: ListingDeps, resource: ResourceId): Promise<ListingResult> {
  const { store, client } = deps;
  const productNo = productOf(resource);
  const found = await store.readCheckpoint(resource);
  const resumed = found && found.page > 0 && deps.now() - found.startedAt < CHECKPOINT_MAX_AGE_MS ? found : null;
  if (!resumed) await store.discardListing(resource);
  let cp: ListingCheckpoint = resumed ?? fresh(resource, deps.now());
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
  /** Drops the listing under way and lists again from page 1; the keys to agree on go along. */
  const startOver = async (suspects = cp.suspects) => {
    await store.discardListing(resource);
    cp = fresh(resource, deps.now());
    if (suspects) cp.suspects = suspects;
  };
  /** Lists again when this run may, else fails (nothing applied). */
  const again = async (what: string) => {
    if (++restarts > MAX_RESTARTS) {
      await store.discardListing(resource);
      throw inconsistent(resource, what);
    }
    await startOver();
  };

  for (;;) {
    for (let page: number = cp.page + 1; ; page++) {
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
        await again('it kept changing while it was being read');
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
      cp = {
        ...cp,
        page,
        totalPages: p.totalPages,
        dataCount: p.dataCount,
        unkeyed,
        rows: (cp.rows ?? 0) + staged.length,
      };
      await store.stagePage(cp, staged, deps.lease());
      deps.onPage?.(cp);
      const last = p.totalPages !== null ? page >= p.totalPages : p.rowsPath === 'data' || p.rowCount === 0;
      if (last) break;
    }

    // a key on two pages, or fewer rows than counted: the pages shifted under the listing
    const staged = await store.readStaged(resource);
    const rows = cp.rows ?? staged.size;
    if (staged.size !== rows) {
      await again(`${rows - staged.size} key(s) were listed twice`);
      continue;
    }
    if (cp.dataCount !== null && rows + cp.unkeyed !== cp.dataCount) {
      await again(`${rows + cp.unkeyed} records were listed but the API counted ${cp.dataCount}`);
      continue;
    }
    const hashes = await store.readHashes(resource);
    const blind = cp.unkeyed > 0;
    const unlisted = blind ? [] : [...hashes.keys()].filter((key) => !staged.has(key));
    const end =
      unlisted.length === 0
        ? { gone: [], kept: [] }
        : await settleUnlisted(deps, cp, unlisted, restarts < MAX_RESTARTS);
    if ('relist' in end) {
      restarts++;
      await startOver(end.relist);
      continue;
    }
    if ('stop' in end) {
      await store.discardListing(resource);
      throw inconsistent(resource, end.stop);
    }
    const upserts = [...staged.values(), ...end.kept].filter((s) => s.record !== null && hashes.get(s.key) !== s.hash);
    // confirmed as of when the listing started: every record is at least that fresh
    const head = await store.commitListing({
      resource,
      upserts,
      deletes: end.gone,
      confirmedAt: cp.startedAt,
      lease: deps.lease(),
    });
    await store.discardListing(resource);
    return { head, upserts: upserts.length, deletes: end.gone.length, rejected, deletionsSkipped: blind };
  }
}
