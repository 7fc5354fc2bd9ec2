// inspect(): what the engine holds and does now, for the devtools and support: its options that say where the data
// comes from, record counts, tracked products, each synced resource's last confirmation and refresh state, the uses
// waiting for the relay, the journal's newest entries. Memory and IndexedDB only, never the network.
import type { EngineOptions, InspectedResource, InspectOptions, LookupInspection } from '../../src/protocol';
import { readEntry } from '../coupon/offlineJournal';
import type { ResourceState } from '../lookups/resourceState';
import { metaKey, type Confirmation, type ShopDatabase } from '../store/store';

/** The newest journal entries shown. */
const LATEST = 50;

export interface InspectDeps {
  options: EngineOptions;
  db: ShopDatabase;
  resources: ResourceState;
  /** The tracked products' reader (trackedProducts.ts: passed in, it stays in the worker's first load only). */
  readTrackedProducts(db: ShopDatabase): Promise<number[]>;
}

/**
 * One read transaction for the counts and rows (a consistent picture), then the refresh state of each resource.
 * @example const i = await inspectEngine({ options, db, resources, readTrackedProducts });
 * i.records?.coupons // 1000
 */
export async function inspectEngine(
  { options, db, resources, readTrackedProducts }: InspectDeps,
  { records = true }: InspectOptions = {},
): Promise<LookupInspection> {
  const tables = [db.coupons, db.issuedCoupons, db.options, db.meta, db.journal, db.outbox];
  const read = await db.transaction('r', tables, async () => {
    const products = await readTrackedProducts(db);
    const keys = [...(options.coupons === 'byCode' ? [] : [metaKey.coupons]), ...products.map(metaKey.options)];
    // (a count reads every row: left out when not asked for)
    const counted = records
      ? Promise.all([db.coupons.count(), db.issuedCoupons.count(), db.options.count()])
      : Promise.resolve(null);
    const [counts, confirmations, unsentUses, count, latest] = await Promise.all([
      counted,
      db.meta.bulkGet(keys),
      db.outbox.count(),
      db.journal.count(),
      db.journal.reverse().limit(LATEST).toArray(),
    ]);
    return { products, keys, counts, confirmations, unsentUses, count, latest };
  });
  const resourcesNow = read.keys.map((key, i): InspectedResource => {
    const syncedAt = (read.confirmations[i] as Confirmation | undefined)?.confirmedAt ?? null;
    const failed = resources.errorOf(key);
    // as a lookup shows it: a failure counts while it is newer than the data it failed to refresh
    const error = failed && (syncedAt === null || failed.at >= syncedAt) ? failed.error : null;
    return { key, syncedAt, fetching: resources.isFetching(key), error };
  });
  return {
    baseUrl: options.baseUrl,
    shopId: options.shopId ?? null,
    dbName: db.name,
    coupons: options.coupons ?? 'all',
    records: read.counts && { coupons: read.counts[0], issuedCoupons: read.counts[1], options: read.counts[2] },
    trackedProducts: read.products,
    resources: resourcesNow,
    unsentUses: read.unsentUses,
    journal: { count: read.count, latest: read.latest.map(readEntry) },
  };
}
