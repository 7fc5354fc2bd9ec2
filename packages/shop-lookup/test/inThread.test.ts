// The engine in this thread from the main entry ('shop-lookup'): with `worker: false`, and by default where there is
// no Worker (Node), as the public contract says; and, in an app's build that defines __SHOP_LOOKUP_IN_THREAD__ as
// false (its bundler drops the engine: test/consumers/package.test.ts and newcomer.test.ts check the builds), a
// bad_options error that names the flag instead. Here the flag is a global set by the test, which the same test of
// it in connectEngine.ts reads when no bundler replaced it.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { firstValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createShopLookup, type ShopLookupOptions } from '../src';
import { confirmed, KEY, SECRET, startMock } from './utils';

let mock: Awaited<ReturnType<typeof startMock>>;
beforeAll(async () => {
  mock = await startMock();
});
afterAll(() => mock.close());

const flag = globalThis as { __SHOP_LOOKUP_IN_THREAD__?: boolean };
afterEach(() => {
  delete flag.__SHOP_LOOKUP_IN_THREAD__;
});

const options = (more: Partial<ShopLookupOptions> = {}): ShopLookupOptions => ({
  baseUrl: mock.url,
  auth: { key: KEY, secret: SECRET },
  indexedDB: new IDBFactory(),
  IDBKeyRange,
  rateLimits: false,
  ...more,
});

describe("the engine in this thread, from the main entry ('shop-lookup')", () => {
  it('runs it with worker: false: a lookup answers from the shop API', async () => {
    const lookup = createShopLookup(options({ worker: false }));
    try {
      expect((await confirmed(lookup.coupon('WELCOME10'))).data).toMatchObject({ coupon_code: 'WELCOME10' });
    } finally {
      await lookup.close();
    }
  });

  it('runs it where there is no Worker (Node) with no worker option: sync() reaches the shop API', async () => {
    expect(typeof (globalThis as { Worker?: unknown }).Worker).toBe('undefined');
    const lookup = createShopLookup(options());
    try {
      expect(await lookup.sync()).toMatchObject({ ok: true });
    } finally {
      await lookup.close();
    }
  });

  it('runs it with __SHOP_LOOKUP_IN_THREAD__ true, as with the flag unset', async () => {
    flag.__SHOP_LOOKUP_IN_THREAD__ = true;
    const lookup = createShopLookup(options({ worker: false }));
    try {
      expect(await lookup.sync()).toMatchObject({ ok: true });
    } finally {
      await lookup.close();
    }
  });

  it('refuses worker: false and the no-Worker default with bad_options naming the flag when a build defines it false', async () => {
    flag.__SHOP_LOOKUP_IN_THREAD__ = false;
    const refused = {
      code: 'bad_options',
      message: expect.stringMatching(/`worker: false` \(or no Worker\) needs __SHOP_LOOKUP_IN_THREAD__ not false/),
    };
    for (const more of [{ worker: false as const }, {}]) {
      const lookup = createShopLookup(options(more));
      try {
        await expect(firstValueFrom(lookup.coupon('WELCOME10'))).rejects.toMatchObject(refused);
        await expect(lookup.sync()).rejects.toMatchObject(refused);
      } finally {
        await lookup.close();
      }
    }
  });
});
