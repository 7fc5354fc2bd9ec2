// The shop-lookup-relay command's configuration: every environment variable it reads (relayVariables.ts), validated
// with zod at start. A missing or malformed value becomes one line naming the variable and what is expected (never a
// secret's value); secrets may come from a file instead (`<NAME>_FILE`, as mounted by Docker or Kubernetes secrets).
import { z } from 'zod';
import { RELAY_VARIABLES, type RelayVariable, type RelayVariableName } from './relayVariables';

type Parsed = { [K in RelayVariableName]: z.output<(typeof RELAY_VARIABLES)[K]['schema']> };

/** The checked configuration of one relay process. */
export interface RelayServerConfig {
  /** The shop's key and secret ('' in hub mode). */
  key: string;
  secret: string;
  /** Hub mode: the file of every shop (SHOPS_FILE); undefined: one shop. */
  shopsFile: string | undefined;
  maxHotShops: number;
  /** Hub mode: records held in memory over every shop (MAX_HOT_RECORDS). */
  maxHotRecords: number;
  target: string;
  shopId: string | undefined;
  redisUrl: string | undefined;
  host: string;
  port: number;
  basePath: string;
  products: number[];
  rateLimits: { list: number; other: number } | false;
  refreshIntervalMs: number;
  /** USES_RETENTION_DAYS, in ms. */
  usesRetentionMs: number;
  /** MAX_USES. */
  maxUses: number;
  /** MAX_USES_PER_TILL; undefined: the relay's default share of maxUses. */
  maxUsesPerTill: number | undefined;
  leaseMs: number;
  trustProxyHops: number;
  tillTokensFile: string | undefined;
  tillTokenSecret: string | undefined;
  storefrontOpen: boolean;
  public: boolean;
  /** Origins of till pages on other origins (CORS_ORIGINS). */
  corsOrigins: string[];
  opsToken: string | undefined;
  logLevel: string;
  /** Log lines one client may cause a minute (LOG_CLIENT_LINES_PER_MINUTE). */
  logClientLinesPerMinute: number;
  limits: {
    maxConnections: number;
    maxLongPolls: number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
  };
  shutdownTimeoutMs: number;
}

export type ConfigResult<T> = { ok: true; config: T } | { ok: false; message: string };

export type Environment = Record<string, string | undefined>;

const shown = (value: string): string => JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);

/**
 * The raw value of each variable asked for: from the environment, or read from `<NAME>_FILE` for secrets (its
 * trailing newline dropped), or the fallback; an empty value counts as unset.
 */
function rawValues(
  env: Environment,
  names: RelayVariableName[],
  readFile: (path: string) => string,
): ConfigResult<Partial<Record<RelayVariableName, string>>> {
  const raw: Partial<Record<RelayVariableName, string>> = {};
  for (const name of names) {
    const spec: RelayVariable = RELAY_VARIABLES[name];
    const direct = env[name] === '' ? undefined : env[name];
    const file = spec.secret && env[`${name}_FILE`] ? env[`${name}_FILE`] : undefined;
    if (direct !== undefined && file !== undefined) {
      return { ok: false, message: `${name} and ${name}_FILE are both set: set one of them` };
    }
    if (file !== undefined) {
      try {
        raw[name] = readFile(file).replace(/\r?\n$/, '');
      } catch (error) {
        const code = (error as { code?: string }).code ?? (error as Error).message;
        return {
          ok: false,
          message: `${name}_FILE: cannot read ${file} (${code}); expected a file holding ${spec.expected}`,
        };
      }
    } else if (direct !== undefined) raw[name] = direct;
    else if (spec.fallback !== undefined) raw[name] = spec.fallback;
  }
  return { ok: true, config: raw };
}

/** Checks the variables asked for with their schemas; the first problem as one line. */
function parseVariables<N extends RelayVariableName>(
  env: Environment,
  names: N[],
  required: RelayVariableName[],
  readFile: (path: string) => string,
): ConfigResult<Pick<Parsed, N>> {
  const raw = rawValues(env, names, readFile);
  if (!raw.ok) return raw;
  for (const name of required) {
    if (raw.config[name] === undefined) {
      const spec: RelayVariable = RELAY_VARIABLES[name];
      return {
        ok: false,
        message: `${name} is not set: expected ${spec.expected}${spec.secret ? ` (or ${name}_FILE: a file holding it)` : ''}`,
      };
    }
  }
  const shape = Object.fromEntries(names.map((name) => [name, RELAY_VARIABLES[name].schema.optional()]));
  const parsed = z.object(shape).safeParse(raw.config);
  if (!parsed.success) {
    const name = String(parsed.error.issues[0]!.path[0]) as RelayVariableName;
    const spec: RelayVariable = RELAY_VARIABLES[name];
    const got = spec.secret ? '' : ` (got ${shown(raw.config[name] ?? '')})`;
    return { ok: false, message: `${name}: expected ${spec.expected}${got}` };
  }
  return { ok: true, config: parsed.data as Pick<Parsed, N> };
}

/** What a mistyped or older name of the shop API's variables most likely meant. */
const MEANT: Record<string, RelayVariableName> = {
  SHOP_API_BASE: 'SHOP_API_TARGET',
  SHOP_API_URL: 'SHOP_API_TARGET',
  SHOP_API_ORIGIN: 'SHOP_API_TARGET',
  SHOP_API_HOST: 'SHOP_API_TARGET',
  SHOP_API_RATE_LIMIT: 'SHOP_API_RATE_LIMITS',
};

/**
 * A `SHOP_API_*` variable the command does not read, as one line naming the one meant; null when there is none.
 * Such a variable would otherwise be ignored without a word (a relay listing the real API instead of the one named).
 * @example unknownShopApiVariable({ SHOP_API_BASE: 'http://127.0.0.1:8787' }) // 'SHOP_API_BASE is not a variable of
 * …: set SHOP_API_TARGET …'
 */
function unknownShopApiVariable(env: Environment): string | null {
  const known = Object.entries(RELAY_VARIABLES as Record<string, RelayVariable>)
    .filter(([name]) => name.startsWith('SHOP_API_'))
    .flatMap(([name, spec]) => (spec.secret ? [name, `${name}_FILE`] : [name]));
  const unknown = Object.keys(env)
    .filter((name) => name.startsWith('SHOP_API_') && env[name] !== undefined && !known.includes(name))
    .sort();
  const name = unknown[0];
  if (name === undefined) return null;
  const meant = MEANT[name];
  return meant
    ? `${name} is not a variable of shop-lookup-relay: set ${meant} instead (${RELAY_VARIABLES[meant].expected})`
    : `${name} is not a variable of shop-lookup-relay; its SHOP_API_ variables are ${known.join(', ')}`;
}

/**
 * Reads and checks the relay's configuration from the environment.
 * @example const result = readRelayConfig(process.env, (p) => readFileSync(p, 'utf8'));
 * if (!result.ok) fail(result.message);
 */
export function readRelayConfig(env: Environment, readFile: (path: string) => string): ConfigResult<RelayServerConfig> {
  const names = Object.keys(RELAY_VARIABLES) as RelayVariableName[];
  const unknown = unknownShopApiVariable(env);
  if (unknown) return { ok: false, message: unknown };
  const hub = env.SHOPS_FILE !== undefined && env.SHOPS_FILE !== '';
  if (hub) {
    // one shop's variables have no meaning in hub mode: each shop's are in SHOPS_FILE
    const single = (['SHOP_API_KEY', 'SHOP_API_SECRET', 'SHOP_ID', 'PRODUCTS', 'TILL_TOKENS_FILE'] as const).find(
      (name) =>
        (env[name] !== undefined && env[name] !== '') ||
        (env[`${name}_FILE`] !== undefined && env[`${name}_FILE`] !== ''),
    );
    if (single) {
      const where =
        single === 'TILL_TOKENS_FILE'
          ? 'each shop\'s static till tokens go in its "tills" in SHOPS_FILE'
          : "each shop's credentials go in SHOPS_FILE";
      return { ok: false, message: `${single} is set with SHOPS_FILE: unset it (hub mode: ${where})` };
    }
  }
  const result = parseVariables(env, names, hub ? [] : ['SHOP_API_KEY', 'SHOP_API_SECRET'], readFile);
  if (!result.ok) return result;
  const v = result.config;
  if (!hub && !v.TILL_TOKENS_FILE && !v.TILL_TOKEN_SECRET && !v.STOREFRONT_OPEN && !v.RELAY_PUBLIC) {
    return {
      ok: false,
      message:
        'nobody may ask this relay: set TILL_TOKENS_FILE and/or TILL_TOKEN_SECRET (till tokens; in hub mode SHOPS_FILE\'s "tills"), STOREFRONT_OPEN=true ' +
        '(the storefront routes for everybody), or RELAY_PUBLIC=true (everything for everybody, private networks only)',
    };
  }
  if (v.MAX_USES_PER_TILL !== undefined && v.MAX_USES_PER_TILL > v.MAX_USES!) {
    return {
      ok: false,
      message: `MAX_USES_PER_TILL (${v.MAX_USES_PER_TILL}) is more than MAX_USES (${v.MAX_USES}): one till's share is a part of the shop's uses`,
    };
  }
  return {
    ok: true,
    config: {
      key: v.SHOP_API_KEY ?? '',
      secret: v.SHOP_API_SECRET ?? '',
      shopsFile: v.SHOPS_FILE,
      maxHotShops: v.MAX_HOT_SHOPS!,
      maxHotRecords: v.MAX_HOT_RECORDS!,
      target: v.SHOP_API_TARGET!,
      shopId: v.SHOP_ID,
      redisUrl: v.REDIS_URL,
      host: v.HOST!,
      port: v.PORT!,
      basePath: v.BASE_PATH!,
      products: v.PRODUCTS!,
      rateLimits: v.SHOP_API_RATE_LIMITS!,
      refreshIntervalMs: v.REFRESH_INTERVAL_MS!,
      usesRetentionMs: v.USES_RETENTION_DAYS! * 86_400_000,
      maxUses: v.MAX_USES!,
      maxUsesPerTill: v.MAX_USES_PER_TILL,
      leaseMs: v.LEASE_MS!,
      trustProxyHops: v.TRUST_PROXY_HOPS!,
      tillTokensFile: v.TILL_TOKENS_FILE,
      tillTokenSecret: v.TILL_TOKEN_SECRET,
      storefrontOpen: v.STOREFRONT_OPEN!,
      public: v.RELAY_PUBLIC!,
      corsOrigins: v.CORS_ORIGINS!,
      opsToken: v.OPS_TOKEN,
      logLevel: v.LOG_LEVEL!,
      logClientLinesPerMinute: v.LOG_CLIENT_LINES_PER_MINUTE!,
      limits: {
        maxConnections: v.MAX_CONNECTIONS!,
        maxLongPolls: v.MAX_LONG_POLLS!,
        headersTimeoutMs: v.HEADERS_TIMEOUT_MS!,
        requestTimeoutMs: v.REQUEST_TIMEOUT_MS!,
        keepAliveTimeoutMs: v.KEEP_ALIVE_TIMEOUT_MS!,
      },
      shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS!,
    },
  };
}

/** Where each secret a reload may change is kept in the configuration. */
const SECRET_FIELDS = {
  SHOP_API_KEY: 'key',
  SHOP_API_SECRET: 'secret',
  REDIS_URL: 'redisUrl',
  TILL_TOKEN_SECRET: 'tillTokenSecret',
  OPS_TOKEN: 'opsToken',
} as const satisfies Partial<Record<RelayVariableName, keyof RelayServerConfig>>;

/**
 * The secrets whose value differs between two readings of the configuration (a SIGHUP read their `_FILE`s again).
 * @example changedSecrets(before, after) // ['TILL_TOKEN_SECRET']
 */
export function changedSecrets(before: RelayServerConfig, after: RelayServerConfig): RelayVariableName[] {
  return (Object.keys(SECRET_FIELDS) as (keyof typeof SECRET_FIELDS)[]).filter(
    (name) => before[SECRET_FIELDS[name]] !== after[SECRET_FIELDS[name]],
  );
}

/** What `shop-lookup-relay token` needs: the signing secret and which shop the token is for. */
export interface TokenCommandConfig {
  tillTokenSecret: string;
  shopId: string | undefined;
  key: string | undefined;
}

/**
 * Reads the variables of the `token` command (TILL_TOKEN_SECRET, and SHOP_ID or SHOP_API_KEY).
 * @example const result = readTokenCommandConfig(process.env, readFile);
 */
export function readTokenCommandConfig(
  env: Environment,
  readFile: (path: string) => string,
): ConfigResult<TokenCommandConfig> {
  const unknown = unknownShopApiVariable(env);
  if (unknown) return { ok: false, message: unknown };
  const result = parseVariables(env, ['TILL_TOKEN_SECRET', 'SHOP_ID', 'SHOP_API_KEY'], ['TILL_TOKEN_SECRET'], readFile);
  if (!result.ok) return result;
  const v = result.config;
  if (!v.SHOP_ID && !v.SHOP_API_KEY) {
    return {
      ok: false,
      message: "SHOP_ID is not set: expected the relay's SHOP_ID (or SHOP_API_KEY, from which the relay derives it)",
    };
  }
  return { ok: true, config: { tillTokenSecret: v.TILL_TOKEN_SECRET!, shopId: v.SHOP_ID, key: v.SHOP_API_KEY } };
}
