// What only the Redis store has to prove, against a real redis-server: several instances sharing one store (lease
// take-over, fencing, pub/sub), one Redis serving several shops, and Redis going away and coming back. The
// behaviour both stores share is proved by packages/relay/test/relayStore.test.ts.
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, type RedisStoreOptions } from '../src/store/redis/redisStore';
import type { FeedHead, Lease, ListingCheckpoint, RelayStore, StagedRecord } from '../src/store/relayStore';
import { startRedisServer, type RedisServer } from '@shop-lookup/test-kit/redisServer';

let redis: RedisServer;
let shopCounter = 0;
const opened: RelayStore[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});
afterAll(() => redis?.stop());

async function open(options: Partial<RedisStoreOptions> = {}): Promise<RelayStore> {
  const store = await createRedisStore({ redis: redis.url, shopId: `shop-${++shopCounter}`, ...options });
  opened.push(store);
  return store;
}

function staged(key: string, amount: number): StagedRecord {
  return { key, record: { coupon_code: key, apply_sale_price: amount }, hash: `h${amount}` };
}

function commitOf(lease: Lease, upserts: StagedRecord[], deletes: string[] = []) {
  return { resource: 'coupons' as const, upserts, deletes, confirmedAt: 1_000, lease };
}

/** Resolves once `check` holds, polling: for state that changes outside the test's control (a TTL running out). */
async function until(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function keysOf(pattern: string): Promise<string[]> {
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    const found: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: pattern })) found.push(...batch);
    return found;
  } finally {
    client.destroy();
  }
}

describe('redisStore', () => {
  it('keeps two shops on one Redis apart: feed, products, token and lease', async () => {
    const a = await open({ shopId: 'two-shops-a' });
    const b = await open({ shopId: 'two-shops-b' });
    const lease = (await a.acquireLease('sync', 'instance-1', 10_000))!;
    await a.commitListing(commitOf(lease, [staged('ONLY-A', 100)]));
    await a.trackProducts([13801]);
    await a.writeToken('token-a');

    expect((await a.head()).version).toBe(1);
    expect((await b.head()).version).toBe(0);
    expect(await b.readRecord('coupons', 'ONLY-A')).toBeNull();
    expect((await b.readSnapshot(null, 100)).records).toEqual([]);
    expect(await b.trackedProducts()).toEqual([]);
    expect(await b.readToken()).toBeNull();
    // the other shop's lease is its own
    expect(await b.acquireLease('sync', 'instance-2', 10_000)).not.toBeNull();
    expect((await a.head()).handle).not.toBe((await b.head()).handle);
    const keys = await keysOf('*two-shops-*');
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).toMatch(/^shop-lookup:\{two-shops-[ab]\}:/);
  });

  it('keeps the feed handle, version and records when a relay restarts', async () => {
    const first = await open({ shopId: 'restart' });
    const lease = (await first.acquireLease('sync', 'instance-1', 10_000))!;
    const head = await first.commitListing(commitOf(lease, [staged('KEEP', 1), staged('ALSO', 2)]));
    await first.close();

    const second = await open({ shopId: 'restart' });
    expect(await second.head()).toEqual(head);
    expect(await second.readRecord('coupons', 'KEEP')).toEqual({ coupon_code: 'KEEP', apply_sale_price: 1 });
  });

  it('lets a second instance take the lease over once the holder died and its TTL ran out', async () => {
    const a = await open({ shopId: 'takeover' });
    const b = await open({ shopId: 'takeover' });
    const held = (await a.acquireLease('sync', 'instance-a', 300))!;
    expect(held).toMatchObject({ name: 'sync', owner: 'instance-a' });
    expect(await b.acquireLease('sync', 'instance-b', 300)).toBeNull();

    await a.close(); // the holder dies without releasing
    let taken: Lease | null = null;
    await until(
      async () => (taken = await b.acquireLease('sync', 'instance-b', 10_000)) !== null,
      'the lease to expire',
    );
    expect(taken!.owner).toBe('instance-b');
    expect(taken!.token).toBeGreaterThan(held.token);
  });

  it('refuses the commit and the staged page of a holder that lost its lease (fencing)', async () => {
    const a = await open({ shopId: 'fencing' });
    const b = await open({ shopId: 'fencing' });
    const old = (await a.acquireLease('sync', 'instance-a', 200))!;
    let fresh: Lease | null = null;
    await until(
      async () => (fresh = await b.acquireLease('sync', 'instance-b', 10_000)) !== null,
      'the lease to expire',
    );

    const checkpoint: ListingCheckpoint = {
      resource: 'coupons',
      listing: 'L1',
      startedAt: 1,
      page: 1,
      totalPages: 2,
      dataCount: 2,
      unkeyed: 0,
    };
    await expect(a.commitListing(commitOf(old, [staged('STALE', 1)]))).rejects.toMatchObject({ code: 'lease_lost' });
    await expect(a.stagePage(checkpoint, [staged('STALE', 1)], old)).rejects.toMatchObject({ code: 'lease_lost' });
    expect(await a.renewLease(old, 10_000)).toBeNull();
    expect((await b.head()).version).toBe(0);
    expect(await b.readCheckpoint('coupons')).toBeNull();

    // the new holder writes, and the old one still cannot release it
    await b.stagePage(checkpoint, [staged('FRESH', 2)], fresh!);
    await a.releaseLease(old);
    expect(await a.acquireLease('sync', 'instance-a', 10_000)).toBeNull();
    expect((await b.commitListing(commitOf(fresh!, [staged('FRESH', 2)]))).version).toBe(1);
  });

  it('resumes a listing on another instance from the checkpoint and the staged pages', async () => {
    const a = await open({ shopId: 'resume' });
    const b = await open({ shopId: 'resume' });
    const leaseA = (await a.acquireLease('sync', 'instance-a', 200))!;
    const checkpoint: ListingCheckpoint = {
      resource: 'coupons',
      listing: 'L7',
      startedAt: 5,
      page: 1,
      totalPages: 2,
      dataCount: 3,
      unkeyed: 0,
    };
    await a.stagePage(checkpoint, [staged('P1-A', 1), staged('P1-B', 2)], leaseA);

    let leaseB: Lease | null = null;
    await until(
      async () => (leaseB = await b.acquireLease('sync', 'instance-b', 10_000)) !== null,
      'the lease to expire',
    );
    expect(await b.readCheckpoint('coupons')).toEqual(checkpoint);
    await b.stagePage({ ...checkpoint, page: 2 }, [staged('P2-A', 3)], leaseB!);
    expect([...(await b.readStaged('coupons')).keys()].sort()).toEqual(['P1-A', 'P1-B', 'P2-A']);
  });

  it('wakes the long-polls of another instance through pub/sub when a listing is committed', async () => {
    const writer = await open({ shopId: 'pubsub' });
    const reader = await open({ shopId: 'pubsub' });
    const heard = new Promise<FeedHead>((resolve) => reader.onHeadChange(resolve));
    const lease = (await writer.acquireLease('sync', 'writer', 10_000))!;
    const head = await writer.commitListing(commitOf(lease, [staged('PUB', 1)]));
    expect(await heard).toEqual(head);
    expect(head.version).toBe(1);
  });

  it('trims the change log and answers "start again" (null) for a since older than what it kept', async () => {
    const store = await open({ shopId: 'trim', maxChanges: 3 });
    const lease = (await store.acquireLease('sync', 'x', 10_000))!;
    await store.commitListing(commitOf(lease, [staged('A', 1), staged('B', 1), staged('C', 1)]));
    const head = await store.commitListing(commitOf(lease, [staged('D', 1), staged('E', 1)]));
    expect(head).toMatchObject({ version: 5, oldest: 2 });
    expect(await store.readChanges(1, 100)).toBeNull();
    expect((await store.readChanges(2, 100))!.map((c) => c.key)).toEqual(['C', 'D', 'E']);
  });

  it('fails at start with an error naming the URL when Redis is unreachable', async () => {
    const url = `redis://:hunter2@127.0.0.1:${redis.port === 1 ? 2 : 1}`;
    const error = await createRedisStore({ redis: url, shopId: 'nowhere' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'redis_unreachable' });
    expect((error as Error).message).toContain('redis://:***@127.0.0.1:1');
    expect((error as Error).message).not.toContain('hunter2');
  });
});

describe('redisStore when Redis goes away', () => {
  let lost: RedisServer;
  beforeAll(async () => {
    lost = await startRedisServer({ persistent: true });
  });
  afterAll(() => lost?.stop());

  it('says it is not ok, naming the URL, while Redis is down, fails calls at once, and is ok again with its data after the restart, waking its listeners', async () => {
    const store = await createRedisStore({ redis: lost.url, shopId: 'lost', maxBackoffMs: 100 });
    opened.push(store);
    const watcher = await createRedisStore({ redis: lost.url, shopId: 'lost', maxBackoffMs: 100 });
    opened.push(watcher);
    const lease = (await store.acquireLease('sync', 'x', 60_000))!;
    const before = await store.commitListing(commitOf(lease, [staged('SURVIVES', 7)]));
    const changes: boolean[] = [];
    store.onHealthChange((h) => changes.push(h.ok));
    expect(store.health()).toMatchObject({ ok: true, error: null });

    // publishes sent while an instance was away are lost: after the reconnect its listeners get the head anyway
    const woken = new Promise<FeedHead>((resolve) => store.onHeadChange(resolve));
    await lost.stop();
    await until(async () => !store.health().ok, 'health to turn not-ok');
    expect(store.health().error).toContain(lost.url);
    await expect(store.head()).rejects.toMatchObject({ code: 'redis_unavailable' });

    await lost.start();
    await until(async () => store.health().ok, 'health to turn ok again');
    expect(changes).toEqual([false, true]);
    expect(await woken).toEqual(before);
    expect(await store.head()).toEqual(before);
    expect(await store.readRecord('coupons', 'SURVIVES')).toEqual({ coupon_code: 'SURVIVES', apply_sale_price: 7 });
    // pub/sub works again after the subscriber reconnected
    const heard = new Promise<FeedHead>((resolve) =>
      watcher.onHeadChange((h) => h.version > before.version && resolve(h)),
    );
    await until(async () => (await store.renewLease(lease, 60_000)) !== null, 'the store to be writable');
    const after = await store.commitListing(commitOf(lease, [staged('AFTER', 8)]));
    expect(await heard).toEqual(after);
  });

  it('starts a new feed history (new handle) when Redis comes back empty', async () => {
    const empty = await startRedisServer();
    try {
      const store = await createRedisStore({ redis: empty.url, shopId: 'flushed', maxBackoffMs: 100 });
      opened.push(store);
      const lease = (await store.acquireLease('sync', 'x', 60_000))!;
      const before = await store.commitListing(commitOf(lease, [staged('GONE', 1)]));
      await empty.stop();
      await until(async () => !store.health().ok, 'health to turn not-ok');
      await empty.start();
      await until(async () => store.health().ok, 'health to turn ok again');
      const head = await store.head();
      expect(head.handle).not.toBe(before.handle);
      expect(head.version).toBe(0);
      // the old lease is gone with the data: its commit is refused, a new one can be taken
      await expect(store.commitListing(commitOf(lease, [staged('X', 1)]))).rejects.toMatchObject({
        code: 'lease_lost',
      });
    } finally {
      await empty.stop();
    }
  });
});
