// The RelayStore contract: every store (memory; Redis once it exists) passes the same tests.
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../src/store/memory/memoryStore';
import type { Lease, ListingCheckpoint, RelayStore, ResourceId, StagedRecord } from '../src/store/relayStore';
import type { UseSent, UsesRecord } from '@shop-lookup/shop-api';
import type { UsesBatch } from '../src/store/useRecords';
import { redisStoreFactory } from './redisStoreFactory';

/** A store factory under test: `now` is a fake clock, `maxChanges` the change-log bound. */
interface StoreFactory {
  name: string;
  create(options: { now: () => number; maxChanges?: number; maxKeptBytes?: number }): Promise<RelayStore>;
}

const stores: StoreFactory[] = [
  { name: 'memory', create: async (options) => createMemoryStore(options) },
  redisStoreFactory,
];

const rec = (key: string, value = 1): StagedRecord => ({
  key,
  record: { coupon_code: key, value },
  hash: `${key}:${value}`,
});

describe.each(stores)('RelayStore contract ($name)', (factory) => {
  let clock = 1_000_000;
  const now = () => clock;
  let store: RelayStore;
  const open: RelayStore[] = [];

  async function make(options: { maxChanges?: number; maxKeptBytes?: number } = {}): Promise<RelayStore> {
    const s = await factory.create({ now, ...options });
    open.push(s);
    return s;
  }

  async function lease(s: RelayStore = store, owner = 'a'): Promise<Lease> {
    const l = await s.acquireLease('sync', owner, 30_000);
    if (!l) throw new Error('lease not free');
    return l;
  }

  async function commit(resource: ResourceId, upserts: StagedRecord[], deletes: string[] = [], s = store) {
    return s.commitListing({ resource, upserts, deletes, confirmedAt: clock, lease: await lease(s) });
  }

  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    clock = 1_000_000;
  });

  it('starts empty at version 0 with a handle, and versions only grow with each change', async () => {
    store = await make();
    const h0 = await store.head();
    expect(h0).toMatchObject({ version: 0, oldest: 0, confirmedAt: {} });
    expect(h0.handle).toMatch(/\S/);
    const h1 = await commit('coupons', [rec('A'), rec('B')]);
    expect(h1.version).toBeGreaterThan(h0.version);
    const h2 = await commit('coupons', [], ['A']);
    expect(h2.version).toBeGreaterThan(h1.version);
    expect(h2.handle).toBe(h0.handle);
    // a commit that changes nothing keeps the version but records the confirmation
    clock += 5;
    const h3 = await commit('coupons', []);
    expect(h3.version).toBe(h2.version);
    expect(h3.confirmedAt.coupons).toBe(clock);
  });

  it('gives two stores different handles', async () => {
    const a = await make();
    const b = await make();
    expect((await a.head()).handle).not.toBe((await b.head()).handle);
  });

  it('answers the changes after a version in order, and null once the bounded log no longer reaches back', async () => {
    store = await make({ maxChanges: 3 });
    await commit('coupons', [rec('A')]);
    const v1 = (await store.head()).version;
    await commit('coupons', [rec('B'), rec('A', 2)]);
    const changes = await store.readChanges(v1, 100);
    expect(changes!.map((c) => [c.key, c.op])).toEqual([
      ['B', 'upsert'],
      ['A', 'upsert'],
    ]);
    expect(changes!.map((c) => c.version)).toEqual([...changes!.map((c) => c.version)].sort((a, b) => a - b));
    expect(changes![1]!.record).toEqual({ coupon_code: 'A', value: 2 });
    expect((await store.readChanges(v1, 1))!.map((c) => c.key)).toEqual(['B']);
    await commit('coupons', [], ['B']);
    await commit('coupons', [rec('C')]);
    const head = await store.head();
    expect(head.oldest).toBeGreaterThan(0);
    expect(await store.readChanges(0, 100)).toBeNull();
    expect(await store.readChanges(head.oldest - 1, 100)).toBeNull();
    const kept = await store.readChanges(head.oldest, 100);
    expect(kept).toHaveLength(head.version - head.oldest);
    expect(kept!.at(-1)).toMatchObject({ key: 'C', op: 'upsert', version: head.version });
    expect(await store.readChanges(head.version, 100)).toEqual([]);
  });

  it('hands out the snapshot in chunks whose cursors cover every record', async () => {
    store = await make();
    await commit(
      'coupons',
      Array.from({ length: 23 }, (_, i) => rec(`C${i}`)),
    );
    await commit('options:7', [rec('1'), rec('2')]);
    await commit('coupons', [], ['C5']);
    const seen = new Set<string>();
    let cursor: string | null = null;
    let chunks = 0;
    do {
      const { records, next } = await store.readSnapshot(cursor, 5);
      expect(records.length).toBeLessThanOrEqual(5);
      for (const r of records) seen.add(`${r.resource}/${r.key}`);
      cursor = next;
      chunks++;
    } while (cursor !== null && chunks < 100);
    expect(seen.size).toBe(24);
    expect(seen.has('coupons/C5')).toBe(false);
    expect(seen.has('options:7/2')).toBe(true);
    expect(await store.readRecord('options:7', '2')).toEqual({ coupon_code: '2', value: 1 });
    expect(await store.readRecord('coupons', 'C5')).toBeNull();
    expect(await store.readHashes('coupons')).toEqual(
      new Map(
        Array.from({ length: 23 }, (_, i) => [`C${i}`, `C${i}:1`]).filter(([k]) => k !== 'C5') as [string, string][],
      ),
    );
  });

  it('hands out the snapshot after a position in position order, saying when nothing follows', async () => {
    store = await make();
    await commit(
      'coupons',
      Array.from({ length: 10 }, (_, i) => rec(`C${i}`)),
    );
    await commit('options:7', [rec('1'), rec('2')]);
    await commit('options:70', [rec('3')]);
    const positions: string[] = [];
    let after: string | null = null;
    let done = false;
    let chunks = 0;
    while (!done && chunks < 100) {
      const chunk = await store.readChunk!(after, 4);
      positions.push(...chunk.records.map((r) => `${r.resource}\u0000${r.key}`));
      expect(chunk.last).toBe(positions.at(-1));
      ({ last: after, done } = chunk);
      chunks++;
    }
    expect(chunks).toBe(4); // 13 records, 4 a chunk: the fourth says nothing follows, no empty fifth
    expect(positions).toEqual([...positions].sort());
    expect(positions).toHaveLength(13);
    // after every coupon (`coupons\u0001`), and after the last key of options:7: the next resources only
    expect((await store.readChunk!('coupons\u0001', 10)).records.map((r) => r.key)).toEqual(['1', '2', '3']);
    expect(await store.readChunk!('options:7\u00002', 10)).toMatchObject({
      records: [{ resource: 'options:70', key: '3' }],
      done: true,
    });
    expect(await store.readChunk!('options:70\u00003', 10)).toEqual({
      records: [],
      last: 'options:70\u00003',
      done: true,
      handle: (await store.head()).handle,
    });
  });

  it('refuses a commit or a staged page under a lease another owner has taken since (fencing)', async () => {
    store = await make();
    const old = await store.acquireLease('sync', 'a', 1_000);
    clock += 1_001;
    const taker = await store.acquireLease('sync', 'b', 1_000);
    expect(taker!.token).toBeGreaterThan(old!.token);
    await expect(
      store.commitListing({ resource: 'coupons', upserts: [rec('X')], deletes: [], confirmedAt: clock, lease: old! }),
    ).rejects.toMatchObject({ code: 'lease_lost' });
    const checkpoint: ListingCheckpoint = {
      resource: 'coupons',
      listing: 'l1',
      startedAt: clock,
      page: 1,
      totalPages: 2,
      dataCount: 3,
      unkeyed: 0,
    };
    await expect(store.stagePage(checkpoint, [rec('X')], old!)).rejects.toMatchObject({ code: 'lease_lost' });
    expect(await store.readCheckpoint('coupons')).toBeNull();
    expect((await store.head()).version).toBe(0);
    // released: also refused
    await store.releaseLease(taker!);
    await expect(
      store.commitListing({ resource: 'coupons', upserts: [rec('X')], deletes: [], confirmedAt: clock, lease: taker! }),
    ).rejects.toMatchObject({ code: 'lease_lost' });
  });

  it('stages pages with their checkpoint, reads them back, and discards a listing', async () => {
    store = await make();
    const l = await lease();
    const cp: ListingCheckpoint = {
      resource: 'coupons',
      listing: 'l1',
      startedAt: clock,
      page: 1,
      totalPages: 2,
      dataCount: 3,
      unkeyed: 0,
    };
    await store.stagePage(cp, [rec('A'), rec('B')], l);
    await store.stagePage({ ...cp, page: 2, unkeyed: 1, rows: 3 }, [rec('C')], l);
    expect(await store.readCheckpoint('coupons')).toEqual({ ...cp, page: 2, unkeyed: 1, rows: 3 });
    expect(await store.readCheckpoint('options:1')).toBeNull();
    expect([...(await store.readStaged('coupons')).keys()].sort()).toEqual(['A', 'B', 'C']);
    expect((await store.readStaged('coupons')).get('C')).toEqual(rec('C'));
    // a new listing starts with nothing staged
    await store.stagePage({ ...cp, listing: 'l2', page: 1 }, [rec('D')], l);
    expect([...(await store.readStaged('coupons')).keys()]).toEqual(['D']);
    await store.discardListing('coupons');
    expect(await store.readCheckpoint('coupons')).toBeNull();
    expect((await store.readStaged('coupons')).size).toBe(0);
    expect((await store.head()).version).toBe(0);
  });

  it('keeps the tracked products as a set and says which were new', async () => {
    store = await make();
    expect(await store.trackedProducts()).toEqual([]);
    expect(await store.trackProducts([5, 3])).toEqual([5, 3]);
    expect(await store.trackProducts([3, 9])).toEqual([9]);
    expect((await store.trackedProducts()).sort((a, b) => a - b)).toEqual([3, 5, 9]);
  });

  it('refuses new products past max, adding none of them, while it still stamps the known ones', async () => {
    store = await make();
    await store.trackProducts([1, 2], { at: clock, max: 3 });
    await expect(store.trackProducts([2, 3, 4], { at: clock + 10, max: 3 })).rejects.toMatchObject({
      code: 'too_many_products',
    });
    expect(await store.trackedProducts()).toEqual([1, 2]);
    // 2 was asked for again (stamped clock + 10) even though the call was refused: only 1 is stale at clock + 5
    expect(await store.dropProductsAskedBefore(clock + 5, [])).toEqual([1]);
    expect(await store.trackProducts([3], { at: clock + 10, max: 3 })).toEqual([3]);
    expect(await store.trackedProducts()).toEqual([2, 3]);
  });

  it('drops the products nobody asked for since a time, except those kept, and never an earlier stamp over a later one', async () => {
    store = await make();
    await store.trackProducts([10, 11, 12], { at: clock });
    await store.trackProducts([11], { at: clock + 100 });
    await store.trackProducts([11], { at: clock + 50 }); // an older stamp arriving late does not move it back
    expect(await store.dropProductsAskedBefore(clock + 60, [12])).toEqual([10]);
    expect(await store.trackedProducts()).toEqual([11, 12]);
    expect(await store.dropProductsAskedBefore(clock + 60, [12])).toEqual([]);
    expect(await store.dropProductsAskedBefore(clock + 200, [])).toEqual([11, 12]);
    expect(await store.trackedProducts()).toEqual([]);
  });

  it('grants a lease to one owner, renews it, lets it expire and be taken over, then refuses the old holder', async () => {
    store = await make();
    const a = await store.acquireLease('sync', 'a', 1_000);
    expect(a).toMatchObject({ name: 'sync', owner: 'a', expiresAt: clock + 1_000 });
    expect(await store.acquireLease('sync', 'b', 1_000)).toBeNull();
    expect(await store.acquireLease('other', 'b', 1_000)).not.toBeNull();
    clock += 900;
    const renewed = await store.renewLease(a!, 1_000);
    expect(renewed).toMatchObject({ token: a!.token, expiresAt: clock + 1_000 });
    clock += 900;
    expect(await store.acquireLease('sync', 'b', 1_000)).toBeNull();
    clock += 101;
    const b = await store.acquireLease('sync', 'b', 1_000);
    expect(b!.token).toBeGreaterThan(a!.token);
    expect(await store.renewLease(renewed!, 1_000)).toBeNull();
    await store.releaseLease(renewed!); // not the holder: changes nothing
    expect(await store.acquireLease('sync', 'c', 1_000)).toBeNull();
    await store.releaseLease(b!);
    const c = await store.acquireLease('sync', 'c', 1_000);
    expect(c!.token).toBeGreaterThan(b!.token);
  });

  it('treats a lease past its expiry as lost even when nobody took it', async () => {
    store = await make();
    const a = await store.acquireLease('sync', 'a', 1_000);
    clock += 1_000;
    expect(await store.renewLease(a!, 1_000)).toBeNull();
    await expect(
      store.commitListing({ resource: 'coupons', upserts: [rec('X')], deletes: [], confirmedAt: clock, lease: a! }),
    ).rejects.toMatchObject({ code: 'lease_lost' });
    const again = await store.acquireLease('sync', 'a', 1_000);
    expect(again!.token).toBeGreaterThan(a!.token);
  });

  it('keeps one shared token and drops it only when it is the given one', async () => {
    store = await make();
    expect(await store.readToken()).toBeNull();
    await store.writeToken('t1');
    expect(await store.readToken()).toBe('t1');
    await store.writeToken('t2');
    await store.dropToken('t1'); // another instance already replaced it
    expect(await store.readToken()).toBe('t2');
    await store.dropToken('t2');
    expect(await store.readToken()).toBeNull();
  });

  it('keeps compressed bytes per slot for the digest they encode, a later keep replacing them', async () => {
    store = await make();
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13, 0x1f, 0x8b]); // binary, newlines included
    expect(await store.readKeptBody!('slot-1', 'd1')).toBeNull();
    await store.keepBody!('slot-1', 'd1', bytes);
    expect((await store.readKeptBody!('slot-1', 'd1'))?.equals(bytes)).toBe(true);
    expect(await store.readKeptBody!('slot-1', 'd2')).toBeNull(); // another body (a newer version's chunk)
    expect(await store.readKeptBody!('slot-2', 'd1')).toBeNull();
    await store.keepBody!('slot-1', 'd2', Buffer.from('newer'));
    expect(await store.readKeptBody!('slot-1', 'd1')).toBeNull();
    expect((await store.readKeptBody!('slot-1', 'd2'))?.toString()).toBe('newer');
  });

  it('keeps at most maxKeptBytes of compressed chunks, the ones kept first dropped to make room', async () => {
    store = await make({ maxKeptBytes: 1_000 });
    const body = (bytes: number, fill: number) => Buffer.alloc(bytes, fill);
    for (const slot of ['s1', 's2', 's3']) {
      await store.keepBody!(slot, 'd', body(400, slot.charCodeAt(1)));
      clock += 1;
    }
    expect(await store.readKeptBody!('s1', 'd')).toBeNull();
    expect((await store.readKeptBody!('s2', 'd'))?.equals(body(400, 50))).toBe(true);
    expect((await store.readKeptBody!('s3', 'd'))?.equals(body(400, 51))).toBe(true);
    // a slot kept again counts once (its newer bytes replace the older)
    await store.keepBody!('s3', 'd2', body(450, 7));
    clock += 1;
    expect(await store.readKeptBody!('s2', 'd')).not.toBeNull();
    expect((await store.readKeptBody!('s3', 'd2'))?.equals(body(450, 7))).toBe(true);
    // bytes past the whole budget are not kept, and drop nothing
    await store.keepBody!('big', 'd', body(2_000, 9));
    expect(await store.readKeptBody!('big', 'd')).toBeNull();
    expect(await store.readKeptBody!('s2', 'd')).not.toBeNull();
    // a thousand chunks later the store still holds no more than its budget
    for (let i = 0; i < 1_000; i++) {
      await store.keepBody!(`many-${i}`, 'd', body(100, i % 256));
      clock += 1;
    }
    let held = 0;
    for (let i = 0; i < 1_000; i++) held += (await store.readKeptBody!(`many-${i}`, 'd'))?.length ?? 0;
    expect(held).toBeLessThanOrEqual(1_000);
    expect(held).toBeGreaterThanOrEqual(800);
    expect(await store.readKeptBody!('many-999', 'd')).not.toBeNull();
  });

  it('hands out one cursor key of 32 bytes, the same every time it is asked', async () => {
    store = await make();
    const key = await store.cursorKey!();
    expect(key).toHaveLength(32);
    expect((await store.cursorKey!()).equals(key)).toBe(true);
    const other = await make();
    expect((await other.cursorKey!()).equals(key)).toBe(false);
  });

  it('tells head-change listeners about every commit until they unsubscribe', async () => {
    store = await make();
    const seen: number[] = [];
    const off = store.onHeadChange((h) => seen.push(h.version));
    const h1 = await commit('coupons', [rec('A')]);
    await expect.poll(() => seen).toEqual([h1.version]);
    off();
    await commit('coupons', [rec('B')]);
    await commit('coupons', [rec('C')]);
    const h3 = await store.head();
    // another listener still hears the later commit; the unsubscribed one does not
    const late: number[] = [];
    store.onHeadChange((h) => late.push(h.version));
    const h4 = await commit('coupons', [rec('D')]);
    await expect.poll(() => late).toEqual([h4.version]);
    expect(seen).toEqual([h1.version]);
    expect(h3.version).toBeLessThan(h4.version);
  });

  it('gives a rate limiter that lets requests through within the limits, and reports its health', async () => {
    store = await make();
    const limiter = store.rateLimiter({ list: 1, other: 5 });
    await limiter.acquire('list', 'background');
    await limiter.acquire('other', 'user');
    expect(store.health()).toMatchObject({ ok: true, error: null });
    const off = store.onHealthChange(() => {});
    off();
  });
  const useOf = (entry: string, code: string, at: number, orderId: string | null = `o-${entry}`): UseSent => ({
    entry,
    code,
    couponCode: 'WELCOME10',
    orderId,
    at,
    override: false,
  });
  const batch = (device: string, uses: UseSent[], receivedAt = clock): UsesBatch => ({
    device,
    till: `till-${device}`,
    uses,
    receivedAt,
  });

  it('keeps uses as the `uses` resource: idempotent by (device, entry), conflicts marked by `at`, in snapshot and changes', async () => {
    store = await make();
    await commit('coupons', [rec('A')]);
    const h0 = await store.head();
    const first = await store.commitUses({
      batches: [
        batch('d1', [useOf('e1', 'IC-1', 500)]),
        batch('d2', [useOf('x1', 'IC-1', 400), useOf('x2', 'IC-2', 1)]),
      ],
      max: 100,
      expiredBefore: 0,
    });
    expect(first.outcomes).toEqual([
      { results: [{ entry: 'e1', recorded: true, conflict: { till: 'till-d2', at: 400, orderId: 'o-x1' } }] },
      {
        results: [
          { entry: 'x1', recorded: true, conflict: null },
          { entry: 'x2', recorded: true, conflict: null },
        ],
      },
    ]);
    // one version per changed code
    expect(first.head.version).toBe(h0.version + 2);
    const again = await store.commitUses({
      batches: [batch('d2', [useOf('x1', 'IC-1', 400), useOf('x1', 'IC-1', 400)])],
      max: 100,
      expiredBefore: 0,
    });
    expect(again.outcomes).toEqual([
      {
        results: [
          { entry: 'x1', recorded: false, conflict: null },
          { entry: 'x1', recorded: false, conflict: null },
        ],
      },
    ]);
    expect(again.head.version).toBe(first.head.version);
    const record = (await store.readRecord('uses', 'IC-1')) as UsesRecord;
    expect(record.uses.map((u) => [u.device, u.at, u.conflict])).toEqual([
      ['d2', 400, false],
      ['d1', 500, true],
    ]);
    const changes = (await store.readChanges(h0.version, 100))!;
    expect(changes.map((c) => [c.resource, c.key, c.op])).toEqual([
      ['uses', 'IC-1', 'upsert'],
      ['uses', 'IC-2', 'upsert'],
    ]);
    // snapshot: after the coupons, by key
    const snap = await store.readSnapshot(null, 100);
    expect(snap.records.map((r) => `${r.resource}/${r.key}`)).toEqual(['coupons/A', 'uses/IC-1', 'uses/IC-2']);
    expect((await store.readChunk!('coupons\u0000A', 1)).records.map((r) => r.key)).toEqual(['IC-1']);
  });

  it('drops confirmed codes and expired ones (a delete each), and refuses a batch past the cap once the expired are gone', async () => {
    store = await make();
    await store.commitUses({
      batches: [batch('d1', [useOf('e1', 'IC-1', 1), useOf('e2', 'IC-2', 2)], 1_000)],
      max: 3,
      expiredBefore: 0,
    });
    await store.commitUses({ batches: [batch('d1', [useOf('e3', 'IC-3', 3)], 2_000)], max: 3, expiredBefore: 0 });
    const h0 = await store.head();
    const full = await store.commitUses({
      batches: [batch('d2', [useOf('x1', 'IC-4', 4)]), batch('d1', [useOf('e3', 'IC-3', 3)])],
      max: 3,
      expiredBefore: 500,
    });
    // the resend of a known use is not refused at the cap
    expect(full.outcomes).toEqual([{ full: true }, { results: [{ entry: 'e3', recorded: false, conflict: null }] }]);
    expect((await store.head()).version).toBe(h0.version);
    // confirmed: IC-2's uses go (an unknown code drops nothing)
    const confirmed = await store.dropUses({ codes: ['IC-2', 'IC-9'] });
    expect(confirmed.dropped).toEqual(['IC-2']);
    expect(await store.readRecord('uses', 'IC-2')).toBeNull();
    // at the cap again: IC-1 (newest received 1_000) is expired by the commit itself, IC-3 (2_000) is not
    const taken = await store.commitUses({
      batches: [batch('d2', [useOf('x1', 'IC-4', 4), useOf('x2', 'IC-5', 5)], 3_000)],
      max: 3,
      expiredBefore: 1_500,
    });
    expect(taken.outcomes).toEqual([
      {
        results: [
          { entry: 'x1', recorded: true, conflict: null },
          { entry: 'x2', recorded: true, conflict: null },
        ],
      },
    ]);
    expect(await store.readRecord('uses', 'IC-1')).toBeNull();
    const changes = (await store.readChanges(h0.version, 100))!;
    expect(changes.map((c) => `${c.op} ${c.key}`).sort()).toEqual([
      'delete IC-1',
      'delete IC-2',
      'upsert IC-4',
      'upsert IC-5',
    ]);
    // the sweep: everything received before 2_500
    expect((await store.dropUses({ codes: [], expiredBefore: 2_500 })).dropped).toEqual(['IC-3']);
    expect((await store.readSnapshot(null, 100)).records.map((r) => r.key).sort()).toEqual(['IC-4', 'IC-5']);
  });

  it('records a claim only as the first use of its code (or the same sale), in commit order, and says who has it', async () => {
    store = await make();
    const claim = (device: string, entry: string, orderId: string, receivedAt: number): UsesBatch => ({
      ...batch(device, [useOf(entry, 'IC-1', 5, orderId)], receivedAt),
      claim: true,
    });
    // two tills claim one voucher in one commit: the first in the commit has it, the second is refused, not recorded
    const both = await store.commitUses({
      batches: [claim('d1', 'e1', 'A-1', 2_000), claim('d2', 'x1', 'B-1', 2_000)],
      max: 100,
      expiredBefore: 0,
    });
    expect(both.outcomes).toEqual([
      { results: [{ entry: 'e1', recorded: true, conflict: null, claimed: true }] },
      {
        results: [
          {
            entry: 'x1',
            recorded: false,
            conflict: null,
            claimed: false,
            first: { till: 'till-d1', device: 'd1', at: 2_000, orderId: 'A-1' },
          },
        ],
      },
    ]);
    expect(both.counts).toEqual({ recorded: 1, conflicts: 0, claimsRefused: 1, released: 0 });
    // a claim's time is the relay's (it is made online): 2_000, not the till's 5
    const record = (await store.readRecord('uses', 'IC-1')) as UsesRecord;
    expect(record.uses.map((u) => [u.entry, u.at, u.claimedAt])).toEqual([['e1', 2_000, 5]]);
    // the same sale claimed again (the order re-checked on its till) is granted; a resend answers as it stands
    const same = await store.commitUses({ batches: [claim('d1', 'e2', 'A-1', 3_000)], max: 100, expiredBefore: 0 });
    expect(same.outcomes).toEqual([{ results: [{ entry: 'e2', recorded: true, conflict: null, claimed: true }] }]);
    const resend = await store.commitUses({ batches: [claim('d1', 'e1', 'A-1', 4_000)], max: 100, expiredBefore: 0 });
    expect(resend.outcomes).toEqual([{ results: [{ entry: 'e1', recorded: false, conflict: null, claimed: true }] }]);
    // another till's order of the same id is another sale
    const sameId = await store.commitUses({ batches: [claim('d2', 'x2', 'A-1', 5_000)], max: 100, expiredBefore: 0 });
    expect(sameId.outcomes).toMatchObject([{ results: [{ entry: 'x2', recorded: false, claimed: false }] }]);
    expect(((await store.readRecord('uses', 'IC-1')) as UsesRecord).uses).toHaveLength(2);
  });

  it("releases a till's own use (the code goes when none is left) and refuses to release another till's", async () => {
    store = await make();
    await store.commitUses({
      batches: [batch('d1', [useOf('e1', 'IC-1', 10)]), batch('d2', [useOf('x1', 'IC-1', 20)])],
      max: 100,
      expiredBefore: 0,
    });
    const h0 = await store.head();
    // d2 tries to give back d1's use (same device id, another till name): refused; then d1 gives back its own
    const done = await store.commitUses({
      batches: [
        { ...batch('d1', []), till: 'till-d2', releases: [{ entry: 'r0', code: 'IC-1', use: 'e1' }] },
        { ...batch('d1', []), releases: [{ entry: 'r1', code: 'IC-1', use: 'e1' }] },
      ],
      max: 100,
      expiredBefore: 0,
    });
    expect(done.outcomes).toEqual([
      { results: [], releases: [{ entry: 'r0', released: false, refused: true }] },
      { results: [], releases: [{ entry: 'r1', released: true }] },
    ]);
    // the use left is the first now: no conflict
    const left = (await store.readRecord('uses', 'IC-1')) as UsesRecord;
    expect(left.uses.map((u) => [u.entry, u.conflict])).toEqual([['x1', false]]);
    // a release of what is gone already is no error: nothing to give back
    const again = await store.commitUses({
      batches: [{ ...batch('d1', []), releases: [{ entry: 'r1', code: 'IC-1', use: 'e1' }] }],
      max: 100,
      expiredBefore: 0,
    });
    expect(again.outcomes).toEqual([{ results: [], releases: [{ entry: 'r1', released: false }] }]);
    await store.commitUses({
      batches: [{ ...batch('d2', []), releases: [{ entry: 'r2', code: 'IC-1', use: 'x1' }] }],
      max: 100,
      expiredBefore: 0,
    });
    expect(await store.readRecord('uses', 'IC-1')).toBeNull();
    const changes = (await store.readChanges(h0.version, 100))!;
    expect(changes.map((c) => `${c.op} ${c.key}`)).toEqual(['upsert IC-1', 'delete IC-1']);
    // a new use of the code is the first again
    const fresh = await store.commitUses({
      batches: [batch('d3', [useOf('y1', 'IC-1', 30)])],
      max: 100,
      expiredBefore: 0,
    });
    expect(fresh.outcomes).toEqual([{ results: [{ entry: 'y1', recorded: true, conflict: null }] }]);
  });

  it("refuses a till past its share of the cap (tillFull), nobody else's, and counts its unknown codes against it until retention", async () => {
    store = await make();
    const commit3 = (b: UsesBatch, expiredBefore = 0) =>
      store.commitUses({ batches: [b], max: 100, maxPerTill: 3, expiredBefore });
    expect((await commit3(batch('d1', [useOf('e1', 'IC-1', 1), useOf('e2', 'IC-2', 2)]))).outcomes[0]).toHaveProperty(
      'results',
    );
    expect((await commit3(batch('d1', [useOf('e3', 'IC-3', 3), useOf('e4', 'IC-4', 4)]))).outcomes).toEqual([
      { tillFull: true, held: 2 },
    ]);
    // another till is not affected
    expect((await commit3(batch('d2', [useOf('x1', 'IC-3', 3)]))).outcomes[0]).toHaveProperty('results');
    // the API says IC-1 and IC-2 do not exist: their uses go, and count against d1 (a strike each) until retention
    clock += 1_000;
    const unknown = await store.dropUses({ codes: ['IC-1', 'IC-2'], why: 'unknown' });
    expect(unknown).toMatchObject({ dropped: ['IC-1', 'IC-2'], uses: 2 });
    expect((await commit3(batch('d1', [useOf('e3', 'IC-3', 3), useOf('e4', 'IC-4', 4)]))).outcomes).toEqual([
      { tillFull: true, held: 0 },
    ]);
    expect((await commit3(batch('d1', [useOf('e3', 'IC-3', 3)]))).outcomes[0]).toHaveProperty('results');
    // past retention the strikes are forgotten
    expect(
      (await commit3(batch('d1', [useOf('e4', 'IC-4', 4), useOf('e5', 'IC-5', 5)]), clock + 1)).outcomes[0],
    ).toHaveProperty('results');
  });

  it("bounds a use's time by when it last heard from the till: a connected till's back-dated use is not first", async () => {
    store = await make();
    const t0 = 10_000_000;
    await store.hearTill('till-d2', t0); // till 2 reads the feed from t0 on
    await store.hearTill('till-d2', t0 + 50_000);
    await store.commitUses({
      batches: [batch('d1', [useOf('e1', 'IC-1', t0 + 60_000)], t0 + 60_000)],
      max: 100,
      expiredBefore: 0,
    });
    // till 2, connected for a minute, says it sold it at 0 (or by a clock an hour behind)
    await store.commitUses({
      batches: [batch('d2', [useOf('x1', 'IC-1', 0), useOf('x2', 'IC-2', t0 - 3_600_000)], t0 + 61_000)],
      max: 100,
      expiredBefore: 0,
    });
    const record = (await store.readRecord('uses', 'IC-1')) as UsesRecord;
    expect(record.uses.map((u) => [u.entry, u.at, u.claimedAt, u.conflict])).toEqual([
      ['e1', t0 + 60_000, t0 + 60_000, false],
      ['x1', t0 + 61_000, 0, true],
    ]);
    // a till back after being away: what it sold meanwhile keeps its time (not before it was last heard)
    await store.hearTill('till-d3', t0);
    await store.commitUses({
      batches: [batch('d3', [useOf('y1', 'IC-3', t0 + 200_000), useOf('y2', 'IC-4', t0 - 1)], t0 + 600_000)],
      max: 100,
      expiredBefore: 0,
    });
    expect(((await store.readRecord('uses', 'IC-3')) as UsesRecord).uses[0]).toMatchObject({ at: t0 + 200_000 });
    expect(((await store.readRecord('uses', 'IC-4')) as UsesRecord).uses[0]).toMatchObject({
      at: t0,
      claimedAt: t0 - 1,
    });
    // and never later than it arrived (a clock ahead)
    await store.commitUses({
      batches: [batch('d4', [useOf('z1', 'IC-5', t0 + 9e9)], t0 + 700_000)],
      max: 100,
      expiredBefore: 0,
    });
    expect(((await store.readRecord('uses', 'IC-5')) as UsesRecord).uses[0]).toMatchObject({ at: t0 + 700_000 });
  });

  it("lists uses for an operator, drops a till's uses or a code's, and keeps the codes no API answer named for checking", async () => {
    store = await make();
    await store.commitUses({
      batches: [
        batch('d1', [useOf('e1', 'IC-1', 1), useOf('e2', 'IC-2', 2)], 1_000),
        batch('d2', [useOf('x1', 'IC-1', 3)], 2_000),
      ],
      max: 100,
      expiredBefore: 0,
      known: ['IC-2'],
    });
    expect(
      (await store.listUses({ till: 'till-d2', limit: 10 })).map((r) => [r.code, r.uses.map((u) => u.entry)]),
    ).toEqual([['IC-1', ['x1']]]);
    expect((await store.listUses({ codes: ['IC-2', 'IC-9'], limit: 10 })).map((r) => r.code)).toEqual(['IC-2']);
    expect((await store.listUses({ limit: 1 })).length).toBe(1);
    // IC-2 was known: only IC-1 waits to be checked, once old enough
    expect(await store.uncheckedUses(1_000, 10)).toEqual([]);
    expect(await store.uncheckedUses(5_000, 10)).toEqual(['IC-1']);
    await store.checkedUses(['IC-1']);
    expect(await store.uncheckedUses(5_000, 10)).toEqual([]);
    // the operator drops till 1's uses: IC-2 goes, IC-1 keeps till 2's (now the first)
    const dropped = await store.dropUses({ till: 'till-d1' });
    expect(dropped).toMatchObject({ uses: 2 });
    expect(dropped.dropped.sort()).toEqual(['IC-1', 'IC-2']);
    expect(((await store.readRecord('uses', 'IC-1')) as UsesRecord).uses.map((u) => [u.entry, u.conflict])).toEqual([
      ['x1', false],
    ]);
    expect(await store.readRecord('uses', 'IC-2')).toBeNull();
    // a confirmation keeps the first use as a mark; a second changes nothing
    await store.commitUses({ batches: [batch('d3', [useOf('y1', 'IC-1', 9)], 3_000)], max: 100, expiredBefore: 0 });
    expect(await store.dropUses({ codes: ['IC-1'], why: 'confirmed', at: 4_000 })).toMatchObject({ uses: 1 });
    expect(await store.readRecord('uses', 'IC-1')).toMatchObject({ confirmed: 4_000, uses: [{ entry: 'x1' }] });
    expect(await store.dropUses({ codes: ['IC-1'], why: 'confirmed', at: 5_000 })).toMatchObject({
      dropped: [],
      uses: 0,
    });
  });
});
