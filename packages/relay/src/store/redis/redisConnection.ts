// The Redis connections of one store: the main client (given, or made from a URL), a duplicate for watched
// transactions, a duplicate for pub/sub, and the store's health as seen from the main client's events. Reconnects
// with capped exponential backoff (node-redis's reconnectStrategy); fails fast while Redis is away, so the relay can
// answer from its last snapshot instead of queueing requests. On a Redis Cluster (createCluster()) the main client is
// the cluster (it routes each command by its key), the pub/sub one a duplicate of it, and the transaction one a
// connection of its own to the master that holds the shop's slot (every key of a shop carries its hash tag).
import { createClient, type RedisClientType, type RedisClusterType } from 'redis';
import { ShopLookupError } from '@shop-lookup/shop-api';
import type { StoreHealth } from '../relayStore';

/** The node-redis client type the store works with (any modules; RESP 2 or 3). */
// biome-ignore lint/suspicious/noExplicitAny: node-redis client of any modules and RESP version
export type RedisClient = RedisClientType<any, any, any, any, any>;
/** A node-redis Redis Cluster client (createCluster()), of any modules and RESP version. */
// biome-ignore lint/suspicious/noExplicitAny: node-redis client of any modules and RESP version
export type RedisCluster = Pick<RedisClusterType<any, any, any, any, any>, 'masters' | 'getNodeClientForKey'>;
type ClusterClient = RedisClusterType; // what this file calls on it (the generics do not matter here)

/**
 * True for a node-redis cluster client (createCluster()), connected or not.
 * @example isRedisCluster(createCluster({ rootNodes })) // true
 */
export function isRedisCluster(value: unknown): value is RedisCluster {
  const v = value as Record<string, unknown> | null;
  return typeof v === 'object' && v !== null && 'masters' in v && typeof v.getNodeClientForKey === 'function';
}

export interface RedisConnectionOptions {
  /** `redis://[[user]:password@]host:port[/db]`, or a node-redis client or cluster (not connected, or connected). */
  redis: string | RedisClient | RedisCluster;
  /** On a cluster: a key of the shop; transactions run on a connection to the master of its slot. */
  slotKey?: string;
  /** Attempts at the first connection before giving up with `redis_unreachable`. Default 3. */
  startAttempts?: number;
  /** Longest wait between reconnect attempts, ms. Default 2000. */
  maxBackoffMs?: number;
  now?: () => number;
}

export interface RedisConnection {
  client: RedisClient;
  /** Own connection for WATCH / MULTI / EXEC: a watch is per connection, so transactions run one at a time here. */
  transaction<T>(fn: (tx: RedisClient) => Promise<T>): Promise<T>;
  subscriber: RedisClient;
  /** The URL without its password, for messages. */
  where: string;
  health(): StoreHealth;
  onHealthChange(listener: (health: StoreHealth) => void): () => void;
  /** Runs `fn` when a connection came back after a loss (subscriptions are restored by node-redis itself). */
  onReconnect(listener: () => void): () => void;
  /** Turns a failed Redis call into a ShopLookupError `redis_unavailable` that names the URL. */
  failure(error: unknown): ShopLookupError;
  close(): Promise<void>;
}

/** The URL with any password replaced, safe for logs and status answers. */
function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(an unparsable Redis URL)';
  }
}

function describeClient(client: RedisClient | RedisCluster): string {
  if (isRedisCluster(client)) {
    const options = (client as unknown as { _options?: ClusterClient['_options'] })._options;
    const nodes = (options?.rootNodes ?? []).map((node) => {
      const socket = (node.socket ?? {}) as { host?: string; port?: number };
      return node.url
        ? redactRedisUrl(node.url).replace(/^rediss?:\/\//, '')
        : `${socket.host ?? 'localhost'}:${socket.port ?? 6379}`;
    });
    return `redis-cluster://${nodes.join(',')}`;
  }
  const socket = (client.options?.socket ?? {}) as { host?: string; port?: number; path?: string };
  if (client.options?.url) return redactRedisUrl(client.options.url);
  if (socket.path) return `redis+unix://${socket.path}`;
  return `redis://${socket.host ?? 'localhost'}:${socket.port ?? 6379}`;
}

function reason(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reason(error.errors[0]);
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.message === 'string' && e.message !== '' ? e.message : String(error);
}

/**
 * Connects the main client (and its two duplicates). Rejects with `redis_unreachable`, naming the URL, when Redis
 * cannot be reached at start; later losses only flip health() to not-ok until the reconnect succeeds.
 * @example const conn = await connectRedis({ redis: 'redis://127.0.0.1:6379' });
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<RedisConnection> {
  const now = options.now ?? (() => Date.now());
  const startAttempts = options.startAttempts ?? 3;
  const maxBackoff = options.maxBackoffMs ?? 2000;
  let everReady = false;
  let closing = false;
  const ownsMain = typeof options.redis === 'string';
  const where = typeof options.redis === 'string' ? redactRedisUrl(options.redis) : describeClient(options.redis);

  let startCause: unknown;
  const reconnectStrategy = (retries: number, cause: Error): number | Error => {
    if (!everReady && retries + 1 >= startAttempts) {
      startCause = cause;
      return new Error('gave up connecting');
    }
    // capped exponential backoff with jitter, so many relays do not knock at once
    return Math.min(maxBackoff, 50 * 2 ** Math.min(retries, 10)) + Math.floor(Math.random() * 50);
  };
  const socket = { reconnectStrategy, connectTimeout: 2000 };
  const cluster = isRedisCluster(options.redis) ? (options.redis as unknown as ClusterClient) : null;
  if (cluster && options.slotKey === undefined)
    throw new TypeError('connectRedis: a Redis Cluster needs the slotKey option');
  // a cluster routes each command by its key and has the same command methods: the store uses it as a client
  const client: RedisClient =
    typeof options.redis === 'string'
      ? (createClient({ url: options.redis, socket, disableOfflineQueue: true }) as RedisClient)
      : (options.redis as RedisClient);
  const duplicateOf = (c: RedisClient): RedisClient =>
    c.duplicate({ socket: { ...c.options?.socket, ...socket }, disableOfflineQueue: true } as never) as RedisClient;
  // on a cluster the transaction connection is made once the cluster knows which master holds the slot
  let txClient: RedisClient = cluster ? (null as unknown as RedisClient) : duplicateOf(client);
  const subscriber: RedisClient = cluster ? (cluster.duplicate() as unknown as RedisClient) : duplicateOf(client);

  let health: StoreHealth = { ok: false, error: `Redis at ${where}: connecting`, since: now() };
  const healthListeners = new Set<(h: StoreHealth) => void>();
  const reconnectListeners = new Set<() => void>();
  // Listeners hear of changes of `ok`; a changing reason during one outage only updates the text.
  const setHealth = (ok: boolean, error: string | null): void => {
    if (health.ok === ok) {
      if (!ok) health = { ...health, error };
      return;
    }
    health = { ok, error, since: now() };
    for (const listener of healthListeners) listener(health);
  };

  // Ok only while all three connections are up: a commit needs the transaction one, wake-ups the subscriber.
  const down = new Set<RedisClient>();
  // taken off at close: a client the host shares between stores (a hub's shops) must not keep ours
  // biome-ignore lint/suspicious/noExplicitAny: node-redis client of any modules and RESP version
  type Listener = (...args: any[]) => void;
  const listening: [RedisClient, string, Listener][] = [];
  const on = (c: RedisClient, event: string, fn: Listener): void => {
    c.on(event, fn);
    listening.push([c, event, fn]);
  };
  const watchConnection = (c: RedisClient): void => {
    on(c, 'error', (error: unknown) => {
      if (closing || !everReady) return;
      down.add(c);
      setHealth(false, `Redis at ${where} is unreachable: ${reason(error)}. Serving the last snapshot; reconnecting.`);
    });
    on(c, 'reconnecting', () => {
      if (closing || !everReady) return;
      down.add(c);
      if (health.ok) setHealth(false, `Redis at ${where}: connection lost; reconnecting.`);
    });
    on(c, 'ready', () => {
      down.delete(c);
      if (!everReady || closing || down.size > 0 || health.ok) return;
      setHealth(true, null);
      for (const listener of reconnectListeners) listener();
    });
  };
  // (these listeners also keep node-redis from throwing an 'error' nobody listens to)
  if (cluster) {
    // a cluster's own events are per node and come without 'ready': health follows the shop's master (txClient)
    for (const c of [client, subscriber]) on(c, 'error', () => undefined);
  } else {
    for (const c of [client, txClient, subscriber]) watchConnection(c);
  }
  const onReady = (): void => {
    everReady = true;
    setHealth(true, null);
  };

  try {
    if (!client.isOpen) await client.connect();
    if (cluster) {
      txClient = duplicateOf((await cluster.getNodeClientForKey(options.slotKey!)) as unknown as RedisClient);
      watchConnection(txClient);
    }
    await Promise.all([txClient.connect(), subscriber.connect()]);
  } catch (error) {
    closing = true;
    for (const c of ownsMain ? [client, txClient, subscriber] : [txClient, subscriber]) {
      if (c?.isOpen) c.destroy();
    }
    const cause = startCause ?? error;
    throw new ShopLookupError(
      'redis_unreachable',
      `Redis at ${where} is unreachable: ${reason(cause)}. Start it, or fix the relay's redis option.`,
      { cause },
    );
  }
  onReady();

  let queue: Promise<unknown> = Promise.resolve();
  return {
    client,
    subscriber,
    where,
    transaction(fn) {
      // a failed step must not leave keys watched for the next transaction on this connection
      const run = queue.then(() =>
        fn(txClient).catch(async (error: unknown) => {
          if (txClient.isReady) await txClient.unwatch().catch(() => undefined);
          throw error;
        }),
      );
      queue = run.catch(() => undefined);
      return run;
    },
    health: () => health,
    onHealthChange(listener) {
      healthListeners.add(listener);
      return () => healthListeners.delete(listener);
    },
    onReconnect(listener) {
      reconnectListeners.add(listener);
      return () => reconnectListeners.delete(listener);
    },
    failure(error) {
      if (error instanceof ShopLookupError) return error;
      return new ShopLookupError('redis_unavailable', `Redis at ${where} is unavailable: ${reason(error)}.`, {
        cause: error,
      });
    },
    async close() {
      closing = true;
      // (our own connections keep theirs while they close: an 'error' nobody listens to would throw)
      for (const [c, event, fn] of listening) if (c === client && !ownsMain) c.off(event, fn);
      const mine = ownsMain ? [client, txClient, subscriber] : [txClient, subscriber];
      await Promise.all(
        mine.map(async (c) => {
          if (!c.isOpen) return;
          // close() waits for pending replies; a lost server never sends them
          if (c.isReady) await c.close().catch(() => c.destroy());
          else c.destroy();
        }),
      );
    },
  };
}
