// What every sync unit (coupon listing, a product's options, a read-through item) is given: dependencies passed
// in, and one report they all add to.
import type { SyncReport } from '../../src/protocol';
import type { ApiClient } from '../api/apiClient';
import type { Priority } from '../api/rateLimiter';
import type { ShopDatabase, ShopIdentity } from '../store/store';

export interface ReportDraft extends Omit<SyncReport, 'ok'> {
  /** False once any resource could not be synced completely. */
  complete: boolean;
}

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
}

export function createReportDraft(): ReportDraft {
  return { fetched: 0, written: 0, deleted: 0, rejected: 0, requests: 0, errors: [], complete: true };
}

export function finishReport(d: ReportDraft): SyncReport {
  const { complete, ...counts } = d;
  return { ok: complete, ...counts, errors: [...d.errors] };
}
