// The Redis store as a factory for the RelayStore contract suite (packages/relay/test/relayStore.test.ts): one real
// redis-server for the file, started on first use and stopped after it; every store made is a shop of its own on it.
import { afterAll } from 'vitest';
import { createRedisStore } from '../src/store/redis/redisStore';
import type { RelayStore } from '../src/store/relayStore';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';

let server: Promise<RedisServer> | undefined;
let shops = 0;

afterAll(async () => {
  if (server) await (await server).stop();
});

/** @example const stores = [memoryFactory, redisStoreFactory]; describe.each(stores)(...) */
export const redisStoreFactory = {
  name: 'redis',
  async create(options: { now: () => number; maxChanges?: number; maxKeptBytes?: number }): Promise<RelayStore> {
    server ??= startRedisServer();
    const { url } = await server;
    return createRedisStore({ redis: url, shopId: `contract-${process.pid}-${++shops}`, ...options });
  },
};
