// What one relay process holds that changes while it runs, in one object: the configuration in force, SHOPS_FILE's
// shops, the till tokens, every secret no log line may show, the relay or hub serving, where the process stands
// (starting, serving, stopping), the reload under way and the marks of the requests under way. The request
// handler, the reload and the graceful stop read and change it here; nothing else of the process is mutable.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { defaultShopId } from '../createShopRelay';
import type { RelayHub } from '../hub/hubTypes';
import type { RouteName, ShopRelay } from '../types';
import type { OpsRoute } from './opsRoutes';
import { RelayStartError } from './relayStartError';
import type { RelayServerConfig } from './relayServerConfig';
import { parseShopsFile, type ShopsFileEntry } from './shopsFile';
import { parseTokenFile, type TillTokenEntry } from './tillTokens';

/** Every value no log line may show: the secrets this process has held (rotated ones too), the upstream tokens. */
interface KeptSecrets {
  keep(...values: (string | null | undefined)[]): void;
  /** The secrets of a configuration: key, secret, TILL_TOKEN_SECRET, OPS_TOKEN, REDIS_URL's password. */
  keepConfigured(config: RelayServerConfig): void;
  /** The keys, secrets and till tokens of SHOPS_FILE's shops. */
  keepShops(shops: ReadonlyMap<string, ShopsFileEntry>): void;
  /** The fetch the relay sends upstream with: the token it sends is seen, so no log line can ever carry it. */
  watchUpstream(fetch: typeof globalThis.fetch): typeof globalThis.fetch;
  all(): string[];
}

/** How a request is known to the log and the metrics while it is under way. */
interface RequestMarks {
  /** The route a request is counted under: its operators' route, else the first one authorize was asked about. */
  routes: WeakMap<IncomingMessage, RouteName | OpsRoute>;
  /** Its X-Request-Id (the client's when well formed, else made). */
  ids: WeakMap<IncomingMessage, string>;
  /** The answers not yet ended (told to close their connection when the process stops). */
  inFlight: Set<ServerResponse>;
}

export interface ServerState {
  /** SHOPS_FILE given: the hub of many shops. */
  readonly hubMode: boolean;
  /** The one shop's id, the start's for the whole run ('hub' in hub mode). */
  readonly shop: string;
  /** The configuration in force: the start's, with the secrets a reload read again. */
  config: RelayServerConfig;
  /** SHOPS_FILE's shops (hub mode; else empty). */
  shops: Map<string, ShopsFileEntry>;
  /** TILL_TOKENS_FILE's tokens (else empty). */
  tills: TillTokenEntry[];
  /** The relay of the one shop (null in hub mode, and until it is made). */
  relay: ShopRelay | null;
  /** The hub of every shop (null but in hub mode). */
  hub: RelayHub | null;
  /** 'starting' until the relay (or hub) serves; 'stopping' from the first stop on. */
  phase: 'starting' | 'serving' | 'stopping';
  /** The store's error as last told (null: it answers). */
  storeError: string | null;
  /** The reload under way, or the last one: a second SIGHUP waits for it. */
  reloading: Promise<void>;
  readonly secrets: KeptSecrets;
  readonly requests: RequestMarks;
}

/** Upstream tokens kept out of the logs at most (the newest: a token lives for hours). */
const UPSTREAM_TOKENS_KEPT = 8;

/** The password of a redis:// URL, to keep out of the logs. */
function passwordOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

function keptSecrets(): KeptSecrets {
  const secrets = new Set<string>();
  const upstream = new Set<string>();
  const keep = (...values: (string | null | undefined)[]): void => {
    for (const value of values) if (value) secrets.add(value);
  };
  return {
    keep,
    keepConfigured: (c) => keep(c.key, c.secret, c.tillTokenSecret, c.opsToken, passwordOf(c.redisUrl)),
    keepShops: (shops) =>
      keep(...[...shops.values()].flatMap((s) => [s.key, s.secret, ...s.tills.map((t) => t.token)])),
    watchUpstream: (fetch) => (input, init) => {
      const token = new Headers(init?.headers).get('access-token');
      if (token && !upstream.has(token)) {
        upstream.add(token);
        if (upstream.size > UPSTREAM_TOKENS_KEPT) upstream.delete(upstream.values().next().value!);
      }
      return fetch(input, init);
    },
    all: () => [...secrets, ...upstream],
  };
}

/** The error code a failed read names (ENOENT, EACCES, ...). */
const readProblem = (error: unknown): string => (error as { code?: string }).code ?? (error as Error).message;

/**
 * TILL_TOKENS_FILE's tokens (none without it); throws a RelayStartError naming the file when it does not read.
 * @example state.tills = readTillTokens(state.config, readFile);
 */
export function readTillTokens(config: RelayServerConfig, readFile: (path: string) => string): TillTokenEntry[] {
  if (!config.tillTokensFile) return [];
  let text: string;
  try {
    text = readFile(config.tillTokensFile);
  } catch (error) {
    throw new RelayStartError(
      'config',
      `TILL_TOKENS_FILE: cannot read ${config.tillTokensFile} (${readProblem(error)})`,
    );
  }
  const parsed = parseTokenFile(text);
  if (!parsed.ok) throw new RelayStartError('config', `TILL_TOKENS_FILE ${config.tillTokensFile}, ${parsed.message}`);
  return parsed.entries;
}

/**
 * SHOPS_FILE's shops; throws a RelayStartError naming the file when it does not read.
 * @example const shops = readShops(config.shopsFile, readFile);
 */
export function readShops(file: string, readFile: (path: string) => string): Map<string, ShopsFileEntry> {
  let text: string;
  try {
    text = readFile(file);
  } catch (error) {
    throw new RelayStartError('config', `SHOPS_FILE: cannot read ${file} (${readProblem(error)})`);
  }
  const parsed = parseShopsFile(text);
  if (!parsed.ok) throw new RelayStartError('config', `SHOPS_FILE ${file}, ${parsed.message}`);
  return parsed.shops;
}

/**
 * The state at start: the files read (a RelayStartError when one does not), every secret kept, nothing serving yet.
 * @example const state = createServerState(config, (path) => readFileSync(path, 'utf8'));
 */
export function createServerState(config: RelayServerConfig, readFile: (path: string) => string): ServerState {
  const hubMode = config.shopsFile !== undefined;
  const shops =
    config.shopsFile !== undefined ? readShops(config.shopsFile, readFile) : new Map<string, ShopsFileEntry>();
  const tills = readTillTokens(config, readFile);
  const secrets = keptSecrets();
  secrets.keepConfigured(config);
  secrets.keep(...tills.map((e) => e.token));
  secrets.keepShops(shops);
  return {
    hubMode,
    shop: hubMode ? 'hub' : (config.shopId ?? defaultShopId(config.key)),
    config,
    shops,
    tills,
    relay: null,
    hub: null,
    phase: 'starting',
    storeError: null,
    reloading: Promise.resolve(),
    secrets,
    requests: { routes: new WeakMap(), ids: new WeakMap(), inFlight: new Set() },
  };
}
