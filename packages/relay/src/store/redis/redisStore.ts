// The RelayStore over Redis: what several relay instances of one shop share (see relayStore.ts). Keys live under
// `shop-lookup:{<shopId>}:` (redisKeys.ts), so one Redis serves many shops and a Redis Cluster keeps each shop in one
// slot. Built from node-redis (connections, MULTI/WATCH, pub/sub, reconnects) and rate-limiter-flexible (the shared
// upstream limit); no scripts of our own.
import { randomBytes } from 'node:crypto';
import { WatchError } from 'redis';
import {
  connectRedis,
  isRedisCluster,
  type RedisClient,
  type RedisCluster,
  type RedisConnection,
} from './redisConnection';
import { readHead, redisFeed } from './redisFeed';
import { hashTag, redisKeys, redisPrefix } from './redisKeys';
import { redisKeptBodies } from './redisKeptBodies';
import { redisLeases } from './redisLease';
import { redisListing } from './redisListing';
import { redisUses } from './redisUses';
import { createRedisRateLimiter, holdRateLimits } from './redisRateLimiter';
import { createRedisRefusals } from './redisRefusals';
import { tooManyProducts } from '../tooManyProducts';
import { STORE_DEFAULTS } from '../../defaults';
import type { FeedHead, RelayStore } from '../relayStore';

export interface RedisStoreOptions {
  /**
   * `redis://host:port[/db]` (password allowed; never shown), or a node-redis client or cluster (createCluster())
   * the host owns. @example { redis: createCluster({ rootNodes: [{ url: 'redis://10.0.0.1:7000' }] }) }
   */
  redis: string | RedisClient | RedisCluster;
  /** Names the shop: keys go under `shop-lookup:{<shopId>}:`. @example { shopId: 'shop-7f3a' } */
  shopId: string;
  /**
   * Replaces the whole key prefix (default `shop-lookup:{<shopId>}:`); on a cluster it must hold a hash tag.
   * @example { prefix: 'staging:{shop-7f3a}:' }
   */
  prefix?: string;
  /**
   * Changes kept for `since` (older: start again). Default 100,000, as the memory store.
   * @example { maxChanges: 10_000 }
   */
  maxChanges?: number;
  /**
   * A connection shared with other stores (a hub's shops, relay/store/redis/sharedRedis.ts): the store opens none of
   * its own and closes none; `redis` then only tells whether it is a cluster.
   */
  connection?: RedisConnection;
  /** Attempts at the first connection before failing with `redis_unreachable`. Default 3. */
  startAttempts?: number;
  /** Longest wait between reconnect attempts, ms. Default 2000. */
  maxBackoffMs?: number;
  /** Added to each second of the shared rate limit, ms. Default 200 (see redisRateLimiter.ts). */
  rateLimitMarginMs?: number;
  /** The clock leases expire by (ms). Default Date.now. */
  now?: () => number;
  /**
   * Compressed snapshot chunks kept for the shop at most, bytes (the oldest kept go first). Default
   * STORE_DEFAULTS.maxKeptBytes (16 MiB). @example { maxKeptBytes: 1_000_000 }
   */
  maxKeptBytes?: number;
}

/**
 * Connects to Redis and returns the shared store; rejects with code `redis_unreachable` (naming the URL) when Redis
 * cannot be reached. Later losses show in health() until node-redis has reconnected.
 * @example const store = await createRedisStore({ redis: process.env.REDIS_URL!, shopId: 'shop-7f3a' });
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<RelayStore> {
  const now = options.now ?? (() => Date.now());
  const keys = redisKeys(options.prefix ?? redisPrefix(options.shopId));
  if (isRedisCluster(options.redis) && hashTag(keys.prefix) === null) {
    throw new TypeError(
      `createRedisStore: on a Redis Cluster the prefix ${JSON.stringify(keys.prefix)} must hold a hash tag such as {shop-7f3a}, so a shop's keys share one slot`,
    );
  }
  const conn =
    options.connection ??
    (await connectRedis({
      redis: options.redis,
      slotKey: keys.handle,
      ...(options.startAttempts !== undefined ? { startAttempts: options.startAttempts } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
      now,
    }));
  const { client } = conn;
  const ctx = { conn, keys, now };
  // Redis found without the feed's history later on (flushed, restarted without its data) forgot the shared rate
  // limit's last second too: every instance holds its next upstream call one window. Not at this first read: a new
  // shop's first listing goes at once.
  const onNewHistory = () => holdRateLimits(client, keys, options.rateLimitMarginMs);
  const maxChanges = options.maxChanges ?? STORE_DEFAULTS.maxChanges;
  const feed = redisFeed({ ...ctx, maxChanges, onNewHistory });
  const uses = redisUses({ conn, keys, maxChanges, now, onNewHistory });
  const listing = redisListing(ctx);
  const leases = redisLeases(ctx);
  const kept = redisKeptBodies(conn, keys, { maxBytes: options.maxKeptBytes ?? STORE_DEFAULTS.maxKeptBytes, now });
  const limiters = new Set<{ dispose(): void }>();

  const headListeners = new Set<(head: FeedHead) => void>();
  const emitHead = (head: FeedHead): void => {
    for (const listener of headListeners) listener(head);
  };
  const onMessage = (message: string): void => emitHead(JSON.parse(message) as FeedHead);
  try {
    await readHead(client, keys); // makes the handle on a new Redis
    await conn.subscriber.subscribe(keys.channel, onMessage);
  } catch (error) {
    await conn.close();
    throw conn.failure(error);
  }
  // Publishes sent while we were away are lost: hand the current head to the listeners, so long-polls look again.
  const offReconnect = conn.onReconnect(() => {
    if (headListeners.size > 0) readHead(client, keys, false, onNewHistory).then(emitHead, () => undefined);
  });

  // Every call fails with a ShopLookupError naming the URL when Redis is away (no offline queue: no hanging).
  const guard =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (error) {
        throw conn.failure(error);
      }
    };

  let closed: Promise<void> | undefined;
  return {
    kind: 'redis',
    head: guard(feed.head),
    readSnapshot: guard(feed.readSnapshot),
    readChunk: guard(feed.readChunk),
    readChanges: guard(feed.readChanges),
    readHashes: guard(feed.readHashes),
    readRecord: guard(feed.readRecord),
    commitListing: guard(feed.commitListing),
    commitUses: guard(uses.commitUses),
    dropUses: guard(uses.dropUses),
    hearTill: guard(uses.hearTill),
    uncheckedUses: guard(uses.uncheckedUses),
    checkedUses: guard(uses.checkedUses),
    listUses: guard(uses.listUses),
    readCheckpoint: guard(listing.readCheckpoint),
    stagePage: guard(listing.stagePage),
    readStaged: guard(listing.readStaged),
    discardListing: guard(listing.discardListing),
    trackedProducts: guard(async () =>
      ((await client.sMembers(keys.products)) as string[]).map(Number).sort((a, b) => a - b),
    ),
    trackProducts: guard((productNos: number[], { at = now(), max }: { at?: number; max?: number } = {}) => {
      const given = [...new Set(productNos)].filter((no) => Number.isSafeInteger(no) && no > 0);
      if (given.length === 0) return Promise.resolve([]);
      return conn.transaction(async (tx) => {
        for (let attempt = 0; ; attempt++) {
          await tx.watch(keys.products);
          const known = (await tx.smIsMember(keys.products, given.map(String))) as unknown as number[];
          const fresh = given.filter((_, i) => Number(known[i]) !== 1);
          const size = max === undefined ? 0 : Number(await tx.sCard(keys.products));
          const over = max !== undefined && fresh.length > 0 && size + fresh.length > max;
          const multi = tx.multi();
          const add = over ? given.filter((no) => !fresh.includes(no)) : given;
          if (add.length > 0) {
            if (!over && fresh.length > 0) multi.sAdd(keys.products, fresh.map(String));
            // GT: a later stamp is never replaced by an earlier one
            multi.zAdd(
              keys.productsAsked,
              add.map((no) => ({ score: at, value: String(no) })),
              { comparison: 'GT' },
            );
          }
          try {
            await multi.exec();
          } catch (error) {
            if (error instanceof WatchError && attempt < 10) continue;
            throw error;
          }
          if (over) throw tooManyProducts(max, size);
          return fresh;
        }
      });
    }),
    dropProductsAskedBefore: guard((at: number, keep: readonly number[]) =>
      conn.transaction(async (tx) => {
        for (let attempt = 0; ; attempt++) {
          await tx.watch([keys.products, keys.productsAsked]);
          const members = ((await tx.sMembers(keys.products)) as string[]).map(Number);
          const scores =
            members.length === 0
              ? []
              : ((await tx.zmScore(keys.productsAsked, members.map(String))) as (number | null)[]);
          // a product tracked before stamps existed counts as asked now: it is stamped, not dropped
          const unstamped = members.filter((_, i) => scores[i] == null);
          const stale = members.filter((no, i) => scores[i] != null && Number(scores[i]) < at && !keep.includes(no));
          if (stale.length === 0 && unstamped.length === 0) {
            await tx.unwatch();
            return [];
          }
          const multi = tx.multi();
          if (unstamped.length > 0)
            multi.zAdd(
              keys.productsAsked,
              unstamped.map((no) => ({ score: now(), value: String(no) })),
            );
          if (stale.length > 0) {
            multi.sRem(keys.products, stale.map(String));
            multi.zRem(keys.productsAsked, stale.map(String));
          }
          try {
            await multi.exec();
            return stale.sort((a, b) => a - b);
          } catch (error) {
            if (!(error instanceof WatchError) || attempt >= 10) throw error;
          }
        }
      }),
    ),
    acquireLease: guard(leases.acquire),
    renewLease: guard(leases.renew),
    releaseLease: guard(leases.release),
    readToken: guard(async () => (await client.get(keys.token)) as string | null),
    writeToken: guard(async (token: string) => void (await client.set(keys.token, token))),
    dropToken: guard((token: string) =>
      conn.transaction(async (tx) => {
        // compare-and-delete: another instance may already hold a fresh token
        await tx.watch(keys.token);
        if ((await tx.get(keys.token)) !== token) return void (await tx.unwatch());
        await tx
          .multi()
          .del(keys.token)
          .exec()
          .catch((error: unknown) => {
            if (!(error instanceof WatchError)) throw error; // replaced meanwhile: keep the new one
          });
      }),
    ),
    rateLimiter(limits) {
      const limiter = createRedisRateLimiter({
        client,
        keys,
        limits,
        now,
        ...(options.rateLimitMarginMs !== undefined ? { marginMs: options.rateLimitMarginMs } : {}),
      });
      limiters.add(limiter);
      return limiter;
    },
    refusals: (perMinute) => createRedisRefusals({ client, keyPrefix: keys.refused, perMinute, now }),
    onHeadChange(listener) {
      headListeners.add(listener);
      return () => headListeners.delete(listener);
    },
    readKeptBody: guard(kept.readKeptBody),
    keepBody: guard(kept.keepBody),
    cursorKey: guard(async () => {
      // made by whichever instance asks first (a new or flushed Redis: a new feed history, so no cursor is lost)
      let hex = (await client.get(keys.cursorKey)) as string | null;
      if (hex === null) {
        await client.set(keys.cursorKey, randomBytes(32).toString('hex'), { NX: true });
        hex = (await client.get(keys.cursorKey)) as string | null;
      }
      if (hex === null) throw new Error('the snapshot cursor key could not be made');
      return Buffer.from(hex, 'hex');
    }),
    health: conn.health,
    onHealthChange: conn.onHealthChange,
    close() {
      closed ??= (async () => {
        for (const limiter of limiters) limiter.dispose();
        headListeners.clear();
        offReconnect();
        // (on a shared connection the other shops' channels stay subscribed)
        if (conn.subscriber.isReady) await conn.subscriber.unsubscribe(keys.channel, onMessage).catch(() => undefined);
        await conn.close();
      })();
      return closed;
    },
  };
}
