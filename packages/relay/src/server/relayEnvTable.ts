// The env table of docs/relay.md ("Deploy"), made from the command's own list of variables (relayVariables.ts): each
// variable, its default (the relay's defaults.ts) and what it is, one sentence a cell. `npm run docs:relay-env`
// (scripts/relay-env-table.mjs) writes it between its markers; relayServer.test.ts fails while the docs differ.
import { RELAY_VARIABLES, type RelayVariable } from './relayVariables';

/** The markers the table stands between in docs/relay.md. */
const ENV_TABLE_MARKERS = {
  start: '<!-- the env table: made from packages/relay/src/server/relayVariables.ts by `npm run docs:relay-env` -->',
  end: '<!-- end of the env table -->',
};

const cell = (text: string): string => text.replace(/\|/g, '\\|');

function defaultCell(variable: RelayVariable): string {
  if (variable.shownDefault !== undefined) return variable.shownDefault;
  return variable.fallback === undefined || variable.fallback === '' ? '(none)' : `\`${variable.fallback}\``;
}

/**
 * The table, as markdown lines.
 * @example relayEnvTable().split('\n')[2] // "| `SHOP_API_KEY` | (required) | the shop's admin API key; or `SHOP_API_KEY_FILE` |"
 */
export function relayEnvTable(): string {
  const rows = Object.entries(RELAY_VARIABLES as Record<string, RelayVariable>).map(([name, variable]) => {
    const what = variable.secret ? `${variable.what}; or \`${name}_FILE\`` : variable.what;
    return `| \`${name}\` | ${cell(defaultCell(variable))} | ${cell(what)} |`;
  });
  return ['| variable | default | what |', '|---|---|---|', ...rows].join('\n');
}

/**
 * The table between the markers of `docs` as written there (null when the markers are missing).
 * @example writtenEnvTable(readFileSync('docs/relay.md', 'utf8')) === relayEnvTable()
 */
export function writtenEnvTable(docs: string): string | null {
  const start = docs.indexOf(ENV_TABLE_MARKERS.start);
  const end = docs.indexOf(ENV_TABLE_MARKERS.end);
  if (start < 0 || end < start) return null;
  return docs.slice(start + ENV_TABLE_MARKERS.start.length, end).trim();
}

/**
 * `docs` with the table between its markers made again; throws when the markers are missing.
 * @example writeFileSync(path, withEnvTable(readFileSync(path, 'utf8')));
 */
export function withEnvTable(docs: string): string {
  const start = docs.indexOf(ENV_TABLE_MARKERS.start);
  const end = docs.indexOf(ENV_TABLE_MARKERS.end);
  if (start < 0 || end < start) throw new Error(`the env table's markers are missing: ${ENV_TABLE_MARKERS.start}`);
  return `${docs.slice(0, start + ENV_TABLE_MARKERS.start.length)}\n${relayEnvTable()}\n${docs.slice(end)}`;
}
