// The docs' storefront recipe (docs/embedding.md: storefront.js in the page, storefront-relay.js on the server),
// pasted as written and run in Node: online it fills the option picker and the coupon banner, offline it keeps
// them, and the page never receives the coupon list, an issued coupon or the feed.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockShopApi } from '../packages/mock-server/src';
import { readmeExample } from './consumers/harness';
import { page } from './recipes/storefrontShop';
import { KEY, peek, SECRET, startMock } from '../packages/shop-lookup/test/utils';

/** A pasted block, its package imports pointed at this repository (the code itself as written). */
async function paste(dir: string, name: string, title: string): Promise<string> {
  const code = (await readmeExample(title, 'docs/embedding.md'))
    .replace("from 'shop-lookup/relay'", `from '${join(process.cwd(), 'packages/relay/src/index.ts')}'`)
    .replace("from 'shop-lookup'", `from '${join(process.cwd(), 'test/recipes/storefrontShop.ts')}'`);
  const file = join(dir, name);
  await writeFile(file, code);
  return file;
}

/** Just enough DOM for the recipe: the picker and the banner it fills. */
class FakeElement {
  textContent = '';
  dataset: Record<string, string> = {};
  children: { text: string; value: string }[] = [];
  replaceChildren(...nodes: { text: string; value: string }[]) {
    this.children = nodes;
  }
}

describe('the storefront recipe', () => {
  const dir = join(process.cwd(), 'test/recipes/.pasted');
  const options = new FakeElement();
  const coupon = new FakeElement();
  let mock: MockShopApi;
  let server: Server;
  let relay: { close(): Promise<void> };
  let lookup: import('../packages/shop-lookup/src').ShopLookup;

  beforeAll(async () => {
    mock = await startMock();
    Object.assign(process.env, { SHOP_API_KEY: KEY, SHOP_API_SECRET: SECRET, SHOP_API_TARGET: mock.url });
    Object.assign(globalThis, {
      document: { querySelector: (s: string) => ({ '#options': options, '#coupon': coupon })[s] ?? null },
      Option: class {
        constructor(
          public text: string,
          public value: string,
        ) {}
      },
    });
    await mkdir(dir, { recursive: true });
    ({ relay } = await import(/* @vite-ignore */ await paste(dir, 'storefront-relay.js', 'storefront-relay.js')));
    server = createServer((req, res) => (relay as unknown as (q: typeof req, s: typeof res) => void)(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    page.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ lookup } = await import(/* @vite-ignore */ await paste(dir, 'storefront.js', 'storefront.js')));
  });
  afterAll(async () => {
    await lookup?.close();
    await relay?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await mock?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Until `ok()` holds (the subscriptions write into the fake DOM as their emissions arrive), at most 10 s. */
  const until = (ok: () => boolean, what: string) => expect.poll(ok, { message: what, timeout: 10_000 }).toBe(true);

  it('fills the option picker and the coupon banner online, without the coupon list', async () => {
    await until(() => options.children.length > 0, 'the picker has options');
    expect(options.children.length).toBe(mock.data.products.get(13805)!.length);
    await until(() => /할인/.test(coupon.textContent), 'the banner shows WELCOME10');
    expect(coupon.dataset.offline).toBe('false');
    expect(await lookup.validateCoupon('WELCOME10', { amount: 50_000 })).toMatchObject({ ok: true, source: 'network' });
  });

  it('keeps answering offline from what it stored', async () => {
    page.offline = true;
    await lookup.sync(); // fails: the engine finds out it is offline
    await until(() => coupon.dataset.offline === 'true', 'the banner says offline');
    expect(coupon.textContent).toMatch(/할인/);
    expect(options.children.length).toBeGreaterThan(0);
    expect(await lookup.validateCoupon('WELCOME10', { amount: 50_000 })).toMatchObject({ ok: true, source: 'local' });
  });

  it('never received the coupon list, an issued coupon or the feed', async () => {
    expect(page.asked.filter((a) => /\/v2\/shop\/coupons$|issue-coupons|relay\/v1\/(feed|products)/.test(a))).toEqual(
      [],
    );
    const stored = await peek(page.idb, 'shop-lookup:my-shop', async (db) => ({
      coupons: (await db.coupons.toArray()).map((c) => c.coupon_code),
      issued: await db.issuedCoupons.count(),
    }));
    expect(stored).toEqual({ coupons: ['WELCOME10'], issued: 0 });
  });
});
