// The one small interface between the sync runner and where the data comes from: the shop API listed page by page
// (directListingSource.ts), or a shop-lookup relay's versioned feed (relayFeedSource.ts).
import type { SourceKind } from './relay/relayDiscovery';
import type { SyncContext } from './syncContext';

/** What the runner gives a source for one sync. */
export interface SourceRun {
  ctx: SyncContext;
  /**
   * Runs one unit of work as a refresh of resource `key` (`coupons`, `options:13805`): lookups of it show
   * `fetching` meanwhile, its failure goes into the report. False when the sync should stop here.
   */
  unit(key: string, work: () => Promise<void>): Promise<boolean>;
}

export interface SyncSource {
  readonly kind: SourceKind;
  /**
   * Brings the coupons and the options of `products` up to date.
   * @returns when the options of all products were confirmed, or null when not all of them were.
   */
  syncAll(run: SourceRun, products: number[]): Promise<number | null>;
  /** Newly tracked products: their options, soon. */
  syncProducts(run: SourceRun, products: number[]): Promise<void>;
}
