// Where the relay's state lives: the store the host passed, the embedded memory store, or Redis. This is the one
// place where the `redis` option becomes a store.
import { createMemoryStore } from './memory/memoryStore';
import type { RelayStore } from './relayStore';

/** What the Redis store module exports (relay/store/redis/redisStore.ts). */
interface RedisStoreModule {
  createRedisStore(options: { redis: string | object; shopId: string; now?: () => number }): Promise<RelayStore>;
}

/** Loads the Redis store lazily, so a relay on the memory store never loads a Redis client. */
const loadRedisStore: (() => Promise<RedisStoreModule>) | null = () => import('./redis/redisStore');

/** The packages the Redis store needs (dependencies of @shop-lookup/relay, loaded only with `redis`). */
const REDIS_PEERS = ['redis', 'rate-limiter-flexible'];

/** A missing package named in words: which one, and the command that installs it. */
function missingPeer(error: unknown): Error | null {
  const e = error as { code?: string; message?: string };
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'MODULE_NOT_FOUND') return null;
  const missing = REDIS_PEERS.find((name) => new RegExp(`['"]${name}['"]`).test(e.message ?? ''));
  if (!missing) return null;
  return new Error(
    `createShopRelay: the \`redis\` option needs the package "${missing}", which is not installed. ` +
      `Install the Redis store's packages: npm install ${REDIS_PEERS.join(' ')} ` +
      '(or omit `redis` to use the embedded in-memory store, one instance).',
    { cause: error },
  );
}

export interface OpenStoreOptions {
  store?: RelayStore | undefined;
  redis?: string | object | undefined;
  shopId: string;
  now?: () => number;
}

/**
 * The store to use, and whether the relay owns it (closes it on close()).
 * @example const { store } = await openRelayStore({ shopId }); // the embedded memory store
 */
export async function openRelayStore(options: OpenStoreOptions): Promise<{ store: RelayStore; owned: boolean }> {
  if (options.store) return { store: options.store, owned: false };
  if (options.redis === undefined)
    return { store: createMemoryStore(options.now ? { now: options.now } : {}), owned: true };
  if (!loadRedisStore) {
    throw new Error(
      'createShopRelay: the `redis` option is not available in this build (relay/redisStore.ts is missing). ' +
        'Omit `redis` to use the embedded in-memory store (one instance), or pass `store`.',
    );
  }
  const { createRedisStore } = await loadRedisStore().catch((error: unknown) => {
    throw missingPeer(error) ?? error;
  });
  const store = await createRedisStore({
    redis: options.redis,
    shopId: options.shopId,
    ...(options.now ? { now: options.now } : {}),
  });
  return { store, owned: true };
}
