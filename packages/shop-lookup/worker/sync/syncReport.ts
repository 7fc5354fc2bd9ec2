// The report of a sync (or other network work): the draft its units add counts and errors to, and the SyncReport.
import type { LookupError, SyncReport } from '../../src/protocol';

export interface ReportDraft extends Omit<SyncReport, 'ok' | 'skipped'> {
  /** Parts skipped: refused by the shop's server earlier since the engine started. */
  skipped: LookupError[];
  /** False once any resource could not be synced completely. */
  complete: boolean;
}

/** @example const report = createReportDraft(); report.fetched += 10; return finishReport(report); */
export function createReportDraft(): ReportDraft {
  return { fetched: 0, written: 0, deleted: 0, rejected: 0, requests: 0, errors: [], skipped: [], complete: true };
}

/** @example const report: SyncReport = finishReport(draft); */
export function finishReport(d: ReportDraft): SyncReport {
  const { complete, skipped, ...counts } = d;
  const report: SyncReport = { ok: complete, ...counts, errors: [...d.errors] };
  if (skipped.length > 0) report.skipped = [...skipped];
  return report;
}

/** The report of work that could not run at all (refused, closed, its code failed to load). */
export function failedReport(error: LookupError): SyncReport {
  const report = createReportDraft();
  report.complete = false;
  report.errors.push(error);
  return finishReport(report);
}
