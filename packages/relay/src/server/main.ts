// The `shop-lookup-relay` command: `shop-lookup-relay` runs a relay configured by environment variables (see
// docs/relay.md, "Deploy", shipped in the package's dist/docs/); `shop-lookup-relay token --till NAME [--days N]`
// prints a signed till token. Every failure to start is one line on stderr and a non-zero exit: 2 for the
// configuration, 1 for the rest.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fail } from './fail';
import { readTokenCommandConfig } from './relayServerConfig';
import { signTillToken, TILL_NAME } from './tillTokens';

/** docs/relay.md as this package ships it (dist/docs/, beside the built bin), else a clone's (run from source). */
const relayDocs = [new URL('./docs/relay.md', import.meta.url), new URL('../../../../docs/relay.md', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path));

const USAGE = `usage: shop-lookup-relay                            run the relay (configured by environment variables)
       shop-lookup-relay token --till NAME [--days N]  print a signed till token (needs TILL_TOKEN_SECRET and SHOP_ID or SHOP_API_KEY)
Every variable: docs/relay.md, "Deploy"${relayDocs ? `: ${relayDocs}` : ''}
  online: https://github.com/shop-lookup/shop-lookup/blob/main/docs/relay.md#deploy`;

const readFile = (path: string): string => readFileSync(path, 'utf8');

async function tokenCommand(args: string[]): Promise<void> {
  let values: { till?: string | undefined; days?: string | undefined };
  try {
    ({ values } = parseArgs({ args, options: { till: { type: 'string' }, days: { type: 'string', default: '30' } } }));
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`, 2);
  }
  if (!values.till || !TILL_NAME.test(values.till))
    fail("--till: expected the till's name, 1 to 64 letters, digits, dots, dashes or underscores", 2);
  const days = /^\d{1,4}$/.test(values.days ?? '') ? Number(values.days) : NaN;
  if (!(days >= 1 && days <= 3650))
    fail(`--days: expected a whole number of days from 1 to 3650 (got ${JSON.stringify(values.days)})`, 2);
  const config = readTokenCommandConfig(process.env, readFile);
  if (!config.ok) fail(config.message, 2);
  // the relay's own default (a SHA-256 prefix of the key), loaded only when SHOP_ID is not given
  const shop = config.config.shopId ?? (await import('../createShopRelay')).defaultShopId(config.config.key!);
  const expiresAt = Date.now() + days * 86_400_000;
  process.stdout.write(
    `${signTillToken({ secret: config.config.tillTokenSecret, shop, till: values.till!, expiresAt })}\n`,
  );
  process.stderr.write(`till ${values.till} of shop ${shop}, valid until ${new Date(expiresAt).toISOString()}\n`);
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'token') await tokenCommand(rest);
else if (command === '--help' || command === '-h' || command === 'help') process.stdout.write(`${USAGE}\n`);
else if (command !== undefined) fail(`unknown command ${JSON.stringify(command)}\n${USAGE}`, 2);
// the server and its libraries are loaded only to serve
else {
  const server = await (await import('./runRelayProcess')).runRelayProcess(process.env);
  // npx, npm exec and npm start put npm (and a shell) between the signals and this process: SIGTERM ends npm and
  // leaves the relay running, SIGHUP ends npm and reloads nothing
  const npm = process.env.npm_lifecycle_event;
  if (npm !== undefined) {
    server.log.warn(
      { npm },
      'started through npm (npx, npm exec, npm start): SIGTERM and SIGHUP reach npm, not the relay; run node_modules/.bin/shop-lookup-relay itself',
    );
  }
}
