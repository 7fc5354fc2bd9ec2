// Every environment variable the shop-lookup-relay command reads, in one list: how each is checked (zod), what is
// expected (the error line), what it is and its default (the env table of docs/relay.md is made of these:
// relayEnvTable.ts); the defaults are the relay's (defaults.ts) and the shop API client's.
import { DEFAULT_RATE_LIMITS, DEFAULT_TARGET } from '@shop-lookup/shop-api';
import { z } from 'zod';
import { COMMAND_DEFAULTS, HUB_DEFAULTS, RELAY_DEFAULTS } from '../defaults';
import { SHOP_ID } from '../hub/shopPath';
import { isOrigin } from '../door/cors';

/** One environment variable: how it is checked, what it means (the docs' table is made of these: relayEnvTable.ts). */
export interface RelayVariable {
  /** What is expected, for the error line. */
  expected: string;
  /** What it is, one sentence for the docs' table (markdown; a secret's `<NAME>_FILE` is added there). */
  what: string;
  /** The value used when the variable is unset (as text), if any. */
  fallback?: string;
  /** The docs' default cell when there is no fallback to show (a required variable, a default made at start). */
  shownDefault?: string;
  /** Never echoed; may be given as `<NAME>_FILE`. */
  secret?: boolean;
  schema: z.ZodType;
}

const flag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const whole = (min: number, max: number) =>
  z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
const httpUrl = z
  .string()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol))
  .transform((v) => v.replace(/\/+$/, ''));

/** Every variable the relay command reads, in the order of the docs' table. */
export const RELAY_VARIABLES = {
  SHOP_API_KEY: {
    what: "the shop's admin API key",
    shownDefault: '(required)',
    expected: "the shop's admin API key",
    secret: true,
    schema: z.string().trim().min(1),
  },
  SHOP_API_SECRET: {
    what: "the shop's admin API secret",
    shownDefault: '(required)',
    expected: "the shop's admin API secret",
    secret: true,
    schema: z.string().trim().min(1),
  },
  SHOPS_FILE: {
    what: 'hub mode: a JSON file of every shop, served under `/shops/{shopId}/`, instead of `SHOP_API_KEY`, `SHOP_API_SECRET` and `SHOP_ID` ([hub.md](hub.md#the-command))',
    shownDefault: '(one shop)',
    expected:
      'hub mode: a readable JSON file of every shop served under /shops/{shopId}/, `{ "<shopId>": { "key", "secret", "target"?, "tills"? } }` (instead of SHOP_API_KEY, SHOP_API_SECRET, SHOP_ID)',
    schema: z.string().min(1),
  },
  MAX_HOT_SHOPS: {
    what: 'hub mode: shops kept open at once (about 70 kB each without their records), the others opened again from Redis when asked',
    expected: 'hub mode: shops kept open at once (1 to 100000); the others are opened again from the store when asked',
    fallback: String(HUB_DEFAULTS.maxHotShops),
    schema: whole(1, 100_000),
  },
  MAX_HOT_RECORDS: {
    what: 'hub mode: records held in memory over every shop, the shops beyond served straight from Redis ([hub.md](hub.md#what-the-hub-does))',
    expected:
      'hub mode: records held in memory over every shop (0 to 100000000); the other shops are served straight from Redis',
    fallback: String(HUB_DEFAULTS.maxHotRecords),
    schema: whole(0, 100_000_000),
  },
  SHOP_API_TARGET: {
    what: "the shop API origin (`createShopRelay`'s `target`, the name the README's Vite config reads too)",
    expected: "the shop API origin, an http(s) URL (createShopRelay's target)",
    fallback: DEFAULT_TARGET,
    schema: httpUrl,
  },
  SHOP_ID: {
    what: 'names the shop (Redis keys, discovery, signed tokens), the same on every instance: 1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit',
    shownDefault: 'SHA-256 prefix of the key',
    expected:
      "a name for the shop of 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit, as a hub's shop ids (default: a SHA-256 prefix of the key)",
    schema: z.string().regex(SHOP_ID),
  },
  REDIS_URL: {
    what: '`redis://` or `rediss://`, through which several instances of a shop share one sync',
    shownDefault: '(memory: one instance)',
    expected: 'a redis:// or rediss:// URL; set it on every instance of a shop (omitted: one instance, in memory)',
    secret: true,
    schema: z.string().regex(/^rediss?:\/\/\S+$/),
  },
  HOST: {
    what: 'the address to listen on',
    expected: 'the address to listen on',
    fallback: COMMAND_DEFAULTS.host,
    schema: z.string().min(1),
  },
  PORT: {
    what: 'the port (`0`: any free port, logged)',
    expected: 'a port number from 0 to 65535',
    fallback: String(COMMAND_DEFAULTS.port),
    schema: whole(0, 65535),
  },
  BASE_PATH: {
    what: "mount prefix of the six API paths and `relay/v1/…` (tills use `baseUrl: 'https://relay.example/<BASE_PATH>'`)",
    shownDefault: "`''`",
    expected: "'' or a path starting with '/' under which the API paths and relay/v1 are served",
    fallback: '',
    schema: z.union([z.literal(''), z.string().regex(/^\/[^\s?#]*$/)]).transform((v) => v.replace(/\/+$/, '')),
  },
  PRODUCTS: {
    what: 'product numbers listed from the start, such as `13801,13805`',
    expected: 'product numbers whose options are listed from the start, separated by commas',
    fallback: '',
    schema: z
      .string()
      .regex(/^\s*(\d{1,15}\s*(,\s*\d{1,15}\s*)*)?$/)
      .transform((v) => (v.trim() === '' ? [] : v.split(',').map((n) => Number(n.trim())))),
  },
  SHOP_API_RATE_LIMITS: {
    what: "list and other calls per second to the shop API, shared by every instance (the API's documented limits; `off` only in front of a mock)",
    expected:
      "list and other calls per second to the shop API, shared by every instance, as `list,other` (the API's documented 1,5), or off (in front of a mock only)",
    fallback: `${DEFAULT_RATE_LIMITS.list},${DEFAULT_RATE_LIMITS.other}`,
    schema: z.union([
      z.literal('off').transform(() => false as const),
      z
        .string()
        .regex(/^\d+(\.\d+)?,\d+(\.\d+)?$/)
        .transform((v) => ({ list: Number(v.split(',')[0]), other: Number(v.split(',')[1]) }))
        .refine((v) => v.list > 0 && v.other > 0),
    ]),
  },
  USES_RETENTION_DAYS: {
    what: 'how long the issued-coupon uses the tills report (`POST relay/v1/uses`) are kept while the API does not show the code used (`usesRetentionMs`)',
    expected:
      "how long an issued coupon's uses reported by the tills are kept when the API does not show it used, days (1 to 3650)",
    fallback: String(COMMAND_DEFAULTS.usesRetentionDays),
    schema: whole(1, 3_650),
  },
  MAX_USES: {
    what: "uses of issued coupons the relay keeps for a shop at most (`maxUses`); past it the tills' uses wait on them (`uses_full`)",
    expected: 'uses of issued coupons kept for a shop at most (100 to 100000000)',
    fallback: String(RELAY_DEFAULTS.maxUses),
    schema: whole(100, 100_000_000),
  },
  MAX_USES_PER_TILL: {
    what: "one till's share of `MAX_USES` (`maxUsesPerTill`); past it that till's uses wait on it (`till_uses_full`), the others' are taken",
    shownDefault: '`MAX_USES` / 20, at least 100',
    expected: "one till's share of MAX_USES (1 to 100000000, at most MAX_USES)",
    schema: whole(1, 100_000_000),
  },
  REFRESH_INTERVAL_MS: {
    what: 'how often the API is listed again, ms',
    expected: 'how often the API is listed again, ms (at least 1000)',
    fallback: String(RELAY_DEFAULTS.refreshIntervalMs),
    schema: whole(1_000, 86_400_000),
  },
  LEASE_MS: {
    what: 'the sync lease: how long a crashed lister holds the others back, ms (a stopped one releases it at once)',
    expected: 'the sync lease time, ms (at least 1000): how long a crashed lister blocks the others',
    fallback: String(RELAY_DEFAULTS.leaseMs),
    schema: whole(1_000, 600_000),
  },
  TRUST_PROXY_HOPS: {
    what: 'proxies in front that append to `X-Forwarded-For`: the client address is taken that many entries from the right (never trusted by default)',
    expected: 'how many proxies in front of the relay append to X-Forwarded-For (0: use the connecting address)',
    fallback: '0',
    schema: whole(0, 10),
  },
  TILL_TOKENS_FILE: {
    what: 'static till tokens, one `name token` a line (`#` comments; tokens of 16 characters at least), read again on `kill -HUP`',
    expected: 'a readable file of till tokens, one `name token` a line',
    schema: z.string().min(1),
  },
  TILL_TOKEN_SECRET: {
    what: 'the secret signed till tokens are checked with (32 characters at least)',
    expected: 'the secret signed till tokens are checked with, at least 32 characters',
    secret: true,
    schema: z.string().min(32),
  },
  STOREFRONT_OPEN: {
    what: '`true`: anybody may ask `productOptions`, `productOption` and `coupon` (one coupon by its exact code)',
    expected: 'true or false: anybody may ask productOptions, productOption and coupon (one coupon by its code)',
    fallback: 'false',
    schema: flag,
  },
  RELAY_PUBLIC: {
    what: "`true`: anybody may ask everything but the operators' routes (a private network only)",
    expected: 'true or false: anybody may ask everything (a private network only)',
    fallback: 'false',
    schema: flag,
  },
  CORS_ORIGINS: {
    what: 'origins of till pages served elsewhere, such as `https://till.example,https://pos.example`, whose pages send their token and read every answer',
    expected:
      "origins of till pages served from elsewhere, separated by commas, each as a browser sends it: scheme, host and port, such as https://till.example (an http:// one other than loopback is warned about at start; every origin listed whole: no path, no trailing slash, no '*')",
    fallback: '',
    schema: z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((o) => o.trim())
          .filter((o) => o !== ''),
      )
      // (a `*` is matched literally by browsers' origins: no wildcard works, so none is taken)
      .pipe(z.array(z.string().refine((o) => isOrigin(o) && !o.includes('*')))),
  },
  OPS_TOKEN: {
    what: 'bearer token of `/metrics` and `relay/v1/status`',
    shownDefault: '(this machine only)',
    expected: 'the bearer token of /metrics and relay/v1/status, at least 16 characters (omitted: loopback only)',
    secret: true,
    schema: z.string().min(16),
  },
  LOG_LEVEL: {
    what: '`fatal`, `error`, `warn`, `info` (one line per request), `debug`, `trace` or `silent`',
    expected: 'one of fatal, error, warn, info, debug, trace, silent',
    fallback: COMMAND_DEFAULTS.logLevel,
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  },
  LOG_CLIENT_LINES_PER_MINUTE: {
    what: "log lines one client (a till by its name, else its address's /24 or /64) may cause a minute, the rest counted in one `log lines dropped` line a minute",
    expected:
      "log lines one client (a till, else its address's /24 or /64) may cause a minute, from 10 to 10000000; the others are counted and reported once a minute",
    fallback: String(COMMAND_DEFAULTS.logClientLinesPerMinute),
    schema: whole(10, 10_000_000),
  },
  MAX_CONNECTIONS: {
    what: 'open connections at most (see "Bounds")',
    expected: 'open connections at most (100 to 1000000)',
    fallback: String(COMMAND_DEFAULTS.maxConnections),
    schema: whole(100, 1_000_000),
  },
  MAX_LONG_POLLS: {
    what: 'long-polls parked at once at most',
    expected: 'long-polls parked at once at most (1 to 1000000)',
    fallback: String(RELAY_DEFAULTS.maxLongPolls),
    schema: whole(1, 1_000_000),
  },
  HEADERS_TIMEOUT_MS: {
    what: 'time a client has to send its request headers, ms, after which its connection is closed (one that sends nothing too)',
    expected:
      "time a client has to send its request headers, ms (a new connection without its first request's headers by then is closed)",
    fallback: String(COMMAND_DEFAULTS.headersTimeoutMs),
    schema: whole(1_000, 600_000),
  },
  REQUEST_TIMEOUT_MS: {
    what: "time a client has to send its whole request, ms (a long-poll's wait is not counted)",
    expected: 'time a client has to send its whole request, ms',
    fallback: String(COMMAND_DEFAULTS.requestTimeoutMs),
    schema: whole(1_000, 600_000),
  },
  KEEP_ALIVE_TIMEOUT_MS: {
    what: 'how long an idle keep-alive connection stays open, ms',
    expected: 'how long an idle keep-alive connection stays open, ms',
    fallback: String(COMMAND_DEFAULTS.keepAliveTimeoutMs),
    schema: whole(100, 600_000),
  },
  SHUTDOWN_TIMEOUT_MS: {
    what: 'the longest a SIGTERM/SIGINT stop may take, ms',
    expected: 'the longest a SIGTERM/SIGINT shutdown may take, ms',
    fallback: String(COMMAND_DEFAULTS.shutdownTimeoutMs),
    schema: whole(100, 600_000),
  },
} satisfies Record<string, RelayVariable>;

export type RelayVariableName = keyof typeof RELAY_VARIABLES;
