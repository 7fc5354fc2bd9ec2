// The `shop-lookup-mock` command (package.json "bin"): the mock shop API on a fixed port, for a relay of one's own to
// list (`SHOP_API_TARGET`). PORT (default 8787) and HOST (default 127.0.0.1) from the environment; it prints its
// URL, the credentials it accepts and the codes to try, and stops cleanly on SIGTERM or SIGINT (exit 0). A port in
// use or a bad PORT is one line on stderr and a non-zero exit (2 for PORT, 1 for the rest).
import { mockCodesToTry } from './codesToTry';
import { startMockShopApi } from './startMockShopApi';

/** The port a newcomer's relay points at (`SHOP_API_TARGET=http://127.0.0.1:8787`); the relay's own is 8788. */
const DEFAULT_PORT = 8787;
const KEY = 'demo-key';
const SECRET = 'demo-secret';

function fail(message: string, code: 1 | 2): never {
  process.stderr.write(`shop-lookup-mock: ${message}\n`);
  process.exit(code);
}

/** What the command prints once it listens: the URL, the credentials, the codes, the relay line. */
function banner(url: string, codes: ReturnType<typeof mockCodesToTry>): string {
  const width = Math.max(...codes.map((c) => c.code.length));
  return [
    `mock shop API on ${url} (the Imweb v2 wire format and rate limits: 1 listing and 5 other calls a second)`,
    `  key ${KEY}, secret ${SECRET}`,
    '  codes to try:',
    ...codes.map(
      (c) => `    ${c.code.padEnd(width)}  ${c.kind === 'issued' ? 'issued coupon' : 'coupon'}: ${c.expect}`,
    ),
    `a relay in front of it: SHOP_API_TARGET=${url} SHOP_API_KEY=${KEY} SHOP_API_SECRET=${SECRET} with a SHOP_ID and a TILL_TOKEN_SECRET (README, "Run the relay")`,
    'Ctrl-C stops it.',
  ].join('\n');
}

const port = process.env.PORT === undefined || process.env.PORT === '' ? DEFAULT_PORT : Number(process.env.PORT);
if (!/^\d{1,5}$/.test(String(port)) || port > 65_535)
  fail(`PORT: expected a port number from 0 to 65535 (got ${JSON.stringify(process.env.PORT)})`, 2);
const host = process.env.HOST || '127.0.0.1';

let api: Awaited<ReturnType<typeof startMockShopApi>>;
try {
  api = await startMockShopApi({ port, host, key: KEY, secret: SECRET });
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  fail(
    code === 'EADDRINUSE'
      ? `PORT: port ${port} on ${host} is in use: stop the other server or set another PORT`
      : `cannot listen on port ${port} on ${host}: ${code ?? (error as Error).message}`,
    1,
  );
}
process.stdout.write(`${banner(api.url, mockCodesToTry(api.data))}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void api.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
