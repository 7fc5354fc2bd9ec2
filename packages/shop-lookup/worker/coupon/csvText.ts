// A CSV writer for files a spreadsheet opens: RFC 4180 quoting, and no cell a spreadsheet would run as a formula
// (OWASP "CSV injection": a cell that starts with = + - @, a tab or a carriage return is prefixed with ').

/** Starts a formula (or a DDE call) in Excel, LibreOffice and Google Sheets. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** Needs quotes: a separator, a quote or a line break. */
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One cell as text: null and undefined are empty; a text or number a spreadsheet would read as a formula is
 * prefixed with a single quote (it shows as text); quoted when it holds a comma, a quote or a line break.
 * @example csvCell('=HYPERLINK("http://x")') // "\"'=HYPERLINK(\"\"http://x\"\")\""
 */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A whole file: a header row and the rows, CRLF line ends, and a UTF-8 byte-order mark first (without it, Excel reads
 * the file in the computer's legacy code page and garbles Korean text).
 * @example csvText(['code', 'amount'], [['WELCOME10', 32000]]) // '\uFEFFcode,amount\r\nWELCOME10,32000\r\n'
 */
export function csvText(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  const lines = [header, ...rows].map((row) => row.map(csvCell).join(','));
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}
