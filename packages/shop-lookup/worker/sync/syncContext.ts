// What every sync unit (coupon listing, a product's options, a read-through item) is given: dependencies passed
// in, and one report they all add to (syncReport.ts).
import type { ApiClient, Priority } from '@shop-lookup/shop-api';
import type { ShopDatabase, ShopIdentity } from '../store/store';
import type { OpeningReads } from './openingReads';
import type { ReportDraft } from './syncReport';

export interface SyncContext {
  db: ShopDatabase;
  client: ApiClient;
  report: ReportDraft;
  now: () => number;
  priority: Priority;
  /** Runs one network step under the retry policy of this kind of work. */
  call<T>(step: () => Promise<T>): Promise<T>;
  /** Progress of the running unit: `done` of `total` (null = unknown). */
  progress?(resource: string, done: number, total: number | null): void;
  signal?: AbortSignal | undefined;
  /** The shop this work is for: a write outside a sync checks in its transaction that the database is still its. */
  shop?: ShopIdentity | undefined;
  /** A storefront's start: the first pages of its tracked products' options, asked for already (openingReads.ts). */
  opening?: OpeningReads | undefined;
}
