// The Redis connections a hub instance shares between all its shops: one main client (given, or made from a URL),
// one subscriber on which every shop's head channel is subscribed, and one connection for watched transactions,
// queued (on a Redis Cluster: a subscriber and a transaction connection per master, the one of a shop's slot). A
// shop's store made on it opens no connection of its own, so a shop asked for once costs no round trip to connect.
import type { StoreHealth } from '../relayStore';
import {
  connectRedis,
  isRedisCluster,
  type RedisClient,
  type RedisCluster,
  type RedisConnection,
} from './redisConnection';

export interface SharedRedis {
  /** The main client (a cluster client on a cluster): plain reads of any shop. */
  client: RedisClient;
  /** The connection a shop's store uses (`createRedisStore({ connection })`); its close() closes nothing. */
  forShop(slotKey: string): Promise<RedisConnection>;
  /**
   * Told when the shared connections are lost (every shop's store with them) and when they are back; on a cluster,
   * lost while any master's connection is.
   */
  onHealthChange(listener: (health: StoreHealth) => void): () => void;
  /**
   * Runs `listener` when a connection came back after a loss (on a cluster: any master's), when Redis may have come
   * back without its data: the hub then sweeps its shops at once, not at the next sweep.
   */
  onReconnect(listener: () => void): () => void;
  /** Closes what this made (a client or cluster the host gave stays open). */
  close(): Promise<void>;
}

/** A view of `conn` whose close() leaves it open for the other shops. */
const shared = (conn: RedisConnection): RedisConnection => ({ ...conn, close: async () => undefined });

/** Where a cluster node client connects, as a map key. */
function nodeId(node: unknown): string {
  const options = (node as { options?: { url?: string; socket?: { host?: string; port?: number } } }).options;
  return options?.url ?? `${options?.socket?.host ?? 'localhost'}:${options?.socket?.port ?? 6379}`;
}

/**
 * Connects (rejects with `redis_unreachable` naming the URL, as a store would).
 * @example const redis = await connectSharedRedis({ redis: process.env.REDIS_URL! });
 * const conn = await redis.forShop('shop-lookup:{s1}:feed:handle');
 */
export async function connectSharedRedis(options: {
  redis: string | RedisClient | RedisCluster;
  now?: () => number;
}): Promise<SharedRedis> {
  const now = options.now ?? (() => Date.now());
  if (!isRedisCluster(options.redis)) {
    const conn = await connectRedis({ redis: options.redis, now });
    // every shop's store listens to the shared connections' events
    for (const c of [conn.client, conn.subscriber])
      (c as unknown as { setMaxListeners?(n: number): void }).setMaxListeners?.(0);
    const view = shared(conn);
    return {
      client: conn.client,
      forShop: async () => view,
      onHealthChange: conn.onHealthChange,
      onReconnect: conn.onReconnect,
      close: () => conn.close(),
    };
  }
  const cluster = options.redis as unknown as RedisClient & { getNodeClientForKey(key: string): Promise<unknown> };
  (cluster as unknown as { setMaxListeners?(n: number): void }).setMaxListeners?.(0);
  if (!cluster.isOpen) await cluster.connect();
  const byMaster = new Map<string, Promise<RedisConnection>>();
  // the masters whose connection is lost now; the cluster is healthy while there is none
  const down = new Map<string, StoreHealth>();
  const listeners = new Set<(health: StoreHealth) => void>();
  const follow = (id: string, conn: RedisConnection): void => {
    conn.onHealthChange((health) => {
      const wasOk = down.size === 0;
      if (health.ok) down.delete(id);
      else down.set(id, health);
      const ok = down.size === 0;
      if (ok === wasOk) return;
      for (const listener of listeners) listener(health);
    });
  };
  const reconnected = new Set<() => void>();
  return {
    client: cluster,
    async forShop(slotKey) {
      const id = nodeId(await cluster.getNodeClientForKey(slotKey));
      let conn = byMaster.get(id);
      if (!conn) {
        conn = connectRedis({ redis: options.redis, slotKey, now });
        byMaster.set(id, conn);
        conn.then(
          (c) => {
            follow(id, c);
            c.onReconnect(() => {
              for (const listener of reconnected) listener();
            });
          },
          () => undefined,
        );
        conn.catch(() => byMaster.get(id) === conn && byMaster.delete(id)); // the next shop tries again
      }
      return shared(await conn);
    },
    onHealthChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onReconnect(listener) {
      reconnected.add(listener);
      return () => reconnected.delete(listener);
    },
    async close() {
      const all = await Promise.all([...byMaster.values()].map((c) => c.catch(() => null)));
      byMaster.clear();
      await Promise.all(all.map((c) => c?.close()));
    },
  };
}
