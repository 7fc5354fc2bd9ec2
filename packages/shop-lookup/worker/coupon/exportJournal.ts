// exportJournal(): the offline journal as a file a shop can open and reconcile by, one row per verdict, as CSV
// (csvText.ts: safe for spreadsheets) or JSON. Read through the journal's own reader, a page at a time.
import { ShopLookupError } from '../../src/protocol';
import type { JournalEntry, JournalExport, JournalPage, JournalRow } from '../../src/protocol';
import { deviceIdOf } from '../store/deviceId';
import type { ShopDatabase } from '../store/store';
import { csvText } from './csvText';
import { formatShopTime } from './shopTime';

/** The columns, in order: a new one is a field of JournalRow, a line of rowOf and its name here. */
const COLUMNS: readonly (keyof JournalRow)[] = [
  'time',
  'till',
  'order',
  'code',
  'amount',
  'discount',
  'reason',
  'source',
  'overrides',
  'shared',
  'conflict',
  'action',
  'claim',
  'released',
];

/** The journal read a page at a time (the largest page it gives). */
const PAGE = 10_000;

/** One verdict as a row: times on the shop's clock. */
function rowOf(e: JournalEntry, till: string, timeZone: string): JournalRow {
  const time = (ms: number) => formatShopTime(ms, timeZone);
  return {
    time: time(e.at),
    till,
    order: e.orderId,
    code: e.code,
    amount: e.amount,
    discount: e.discount,
    reason: e.reason,
    source: e.source,
    overrides: e.overrides,
    shared: e.shared === null ? null : time(e.shared),
    conflict: e.conflict
      ? `${e.conflict.till} ${time(e.conflict.at)}${e.conflict.orderId === null ? '' : ` order ${e.conflict.orderId}`}`
      : null,
    action: e.action,
    claim: e.claim,
    released: e.released === null ? null : time(e.released),
  };
}

/** A CSV cell of a row's value (overrides: separated by spaces). */
const cellOf = (value: JournalRow[keyof JournalRow]) => (Array.isArray(value) ? value.join(' ') : value);

/** `since` as epoch ms (0: everything); throws `bad_request` for anything but a time. */
function sinceOf(since: JournalExport['since']): number {
  if (since === undefined || since === null) return 0;
  const ms = since instanceof Date ? since.getTime() : since;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new ShopLookupError(
      'bad_request',
      `exportJournal({ since }) must be epoch milliseconds or a Date, got ${JSON.stringify(since)}.`,
    );
  }
  return ms;
}

export interface ExportJournalDeps {
  /** One page of the journal, oldest first (OfflineJournal.list). */
  list(page: JournalPage): Promise<JournalEntry[]>;
  /** The database: its device id is the `till` column when the host names none. */
  db: ShopDatabase;
  /** Its `timeZone`: the shop's (default Asia/Seoul, as the checkout's). */
  options: { timeZone?: string | undefined };
}

/**
 * @example const csv = await exportJournal({ format: 'csv', since: Date.now() - 86_400_000 }, { list, db,
 * options: { timeZone: 'Asia/Seoul' } });
 */
export async function exportJournal(options: JournalExport, deps: ExportJournalDeps): Promise<string> {
  const { format, till } = options ?? ({} as Partial<JournalExport>);
  if (format !== 'csv' && format !== 'json') {
    throw new ShopLookupError(
      'bad_request',
      `exportJournal({ format }) must be 'csv' or 'json', got ${JSON.stringify(format)}.`,
    );
  }
  if (till !== undefined && (typeof till !== 'string' || till === '')) {
    throw new ShopLookupError(
      'bad_request',
      `exportJournal({ till }) must be a non-empty string, got ${JSON.stringify(till)}.`,
    );
  }
  const since = sinceOf(options.since);
  const name = till ?? (await deviceIdOf(deps.db));
  const timeZone = deps.options.timeZone ?? 'Asia/Seoul';
  const rows: JournalRow[] = [];
  for (let after = 0; ; ) {
    const page = await deps.list({ after, limit: PAGE });
    for (const e of page) if (e.at >= since) rows.push(rowOf(e, name, timeZone));
    if (page.length < PAGE) break;
    after = page.at(-1)!.id;
  }
  if (format === 'json') return `[${rows.map((r) => `\n${JSON.stringify(r)}`).join(',')}\n]\n`;
  return csvText(
    COLUMNS,
    rows.map((r) => COLUMNS.map((c) => cellOf(r[c]))),
  );
}
