// The uses sender against a relay client held by the test: batches within the route's bounds, one device each, a use
// leaving the outbox only once acknowledged, and an answer that acknowledges nothing is an error (never a loop).
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_USES_PER_POST, type UseSent } from '@shop-lookup/shop-api';
import type { UseAck } from '../worker/sync/relay/relayFeedClient';
import { createUsesSender } from '../worker/sync/relay/usesSender';
import { openStore, type OutgoingUse, type ShopDatabase } from '../worker/store/store';

const use = (i: number, fields: Partial<OutgoingUse> = {}): OutgoingUse => ({
  entry: `e${String(i).padStart(5, '0')}`,
  device: 'dev-1',
  code: `IC-${i}`,
  couponCode: 'WELCOME10',
  orderId: `O-${i}`,
  at: 1_800_000_000_000 + i,
  override: false,
  ...fields,
});

describe('usesSender', () => {
  let db: ShopDatabase;
  afterEach(() => db?.close());

  const sender = (answer: (device: string, uses: UseSent[]) => UseAck[], takes = true) => {
    const posts: { device: string; uses: UseSent[]; bytes: number }[] = [];
    const s = createUsesSender({
      db,
      client: {
        async postUses(device, uses) {
          posts.push({ device, uses, bytes: new TextEncoder().encode(JSON.stringify({ device, uses })).length });
          return answer(device, uses);
        },
      },
      takesUses: async () => takes,
      now: () => 42,
    });
    return { s, posts };
  };
  const ackAll = (_d: string, uses: UseSent[]) => uses.map((u) => ({ entry: u.entry, recorded: true, conflict: null }));
  const direct = <T>(step: () => Promise<T>) => step();

  it('sends every waiting use in batches of at most 500 uses and 60 kB, one device per request, and empties the outbox', async () => {
    db = openStore('sender-batches', { indexedDB: new IDBFactory(), IDBKeyRange });
    const long = 'x'.repeat(200);
    await db.outbox.bulkPut([
      ...Array.from({ length: 1_100 }, (_, i) => use(i)),
      // long order ids: 150 of them are more than 60 kB
      ...Array.from({ length: 150 }, (_, i) =>
        use(2_000 + i, { orderId: `${long}-${i}`.slice(0, 200), code: `IC-${long}`.slice(0, 200) }),
      ),
      ...Array.from({ length: 3 }, (_, i) => use(3_000 + i, { device: 'dev-0' })),
    ]);
    const { s, posts } = sender(ackAll);
    expect(await s.send(direct)).toBe(1_253);
    expect(await db.outbox.count()).toBe(0);
    for (const p of posts) {
      expect(p.uses.length).toBeLessThanOrEqual(MAX_USES_PER_POST);
      expect(p.bytes).toBeLessThanOrEqual(60_000 + 100);
    }
    expect(posts.some((p) => p.uses.length === MAX_USES_PER_POST)).toBe(true);
    expect(posts.filter((p) => p.device === 'dev-0').flatMap((p) => p.uses)).toHaveLength(3);
    expect(new Set(posts.flatMap((p) => p.uses.map((u) => u.entry))).size).toBe(1_253);
  });

  it('keeps what the relay did not acknowledge, and fails (not loops) on an answer that acknowledges nothing', async () => {
    db = openStore('sender-unacked', { indexedDB: new IDBFactory(), IDBKeyRange });
    await db.outbox.bulkPut([use(1), use(2)]);
    // the first answer takes one; the second takes none of the one left
    let calls = 0;
    const { s } = sender((_d, uses) =>
      ++calls === 1 ? [{ entry: uses[0]!.entry, recorded: true, conflict: null }] : [],
    );
    await expect(s.send(direct)).rejects.toMatchObject({
      code: 'bad_response',
      message: expect.stringMatching(/acknowledges none of the uses/),
    });
    expect((await db.outbox.toArray()).map((u) => u.entry)).toEqual(['e00002']);
  });

  it('sends nothing to a relay that does not take uses', async () => {
    db = openStore('sender-none', { indexedDB: new IDBFactory(), IDBKeyRange });
    await db.outbox.bulkPut([use(1)]);
    const { s, posts } = sender(ackAll, false);
    expect(await s.send(direct)).toBe(0);
    expect(posts).toEqual([]);
    expect(await db.outbox.count()).toBe(1);
  });

  it('a send asked for while one runs joins it and runs once more for what arrived meanwhile', async () => {
    db = openStore('sender-join', { indexedDB: new IDBFactory(), IDBKeyRange });
    await db.outbox.bulkPut([use(1)]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const posts: string[][] = [];
    const s = createUsesSender({
      db,
      client: {
        async postUses(_device, uses) {
          posts.push(uses.map((u) => u.entry));
          if (posts.length === 1) await held;
          return ackAll('', uses);
        },
      },
      takesUses: async () => true,
      now: () => 42,
    });
    const a = s.send(direct);
    await expect.poll(() => posts.length).toBe(1);
    await db.outbox.put(use(2));
    const b = s.send(direct);
    release();
    expect(await a).toBe(2);
    expect(await b).toBe(2);
    expect(posts).toEqual([['e00001'], ['e00002']]);
  });

  it("claims a use within its bound: granted, it leaves the outbox shared; a relay's 429 is asked again in time; no answer in time is a timeout and the use is left to send", async () => {
    db = openStore('sender-claim', { indexedDB: new IDBFactory(), IDBKeyRange });
    const claiming = use(1, { claiming: 1 });
    await db.outbox.put(claiming);
    await db.journal.add({ key: claiming.entry, shared: null, claim: null } as never);
    let calls = 0;
    const s = createUsesSender({
      db,
      client: {
        postUses: async () => [],
        async claimUse(_device, sent) {
          // the relay's bound for this client, once (a burst of the till's own requests)
          if (++calls === 1)
            throw Object.assign(new Error('429 TOO MANY REQUESTS'), { code: 'rate_limited', retryAfterMs: 5 });
          expect(sent).toEqual({
            entry: claiming.entry,
            code: claiming.code,
            couponCode: 'WELCOME10',
            orderId: claiming.orderId,
            at: claiming.at,
            override: false,
          });
          return { claimed: true };
        },
      },
      takesUses: async () => true,
      now: () => 42,
    });
    expect(await s.claim(claiming, 5_000)).toEqual({ claim: 'granted' });
    expect(calls).toBe(2);
    expect(await db.outbox.count()).toBe(0);
    expect(await db.journal.toArray()).toMatchObject([{ key: claiming.entry, shared: 42, claim: 'granted' }]);

    const late = use(2, { claiming: 1 });
    await db.outbox.put(late);
    const slow = createUsesSender({
      db,
      client: {
        postUses: async () => [],
        claimUse: (_d, _u, o) =>
          new Promise((_, reject) => o?.signal?.addEventListener('abort', () => reject(o.signal!.reason))),
      },
      takesUses: async () => true,
      now: () => 42,
    });
    expect(await slow.claim(late, 20)).toEqual({ claim: 'timeout' });
    // (left to the batches: no longer marked as out for a claim)
    expect(await db.outbox.get(late.entry)).toEqual(use(2));
  });
});
