// The demo till as production runs it, on each engine: built by `vite build` (the worker split into chunks, format
// es) and served by `vite preview`. WebKit once evaluated a split worker's entry twice, and the second, never-started
// engine answered every call after the first sync with not_started; the dev server (unbundled) never showed it.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  e2eSuite,
  openPage,
  statusOf,
  textOf,
  verdictState,
  waitForFirstSync,
  waitForText,
} from './harness';

e2eSuite('the built demo till', { timeout: 120_000, demo: { built: true } }, (t) => {
  it('the build splits the worker into chunks', async () => {
    const assets = join(t.demo.outDir!, 'assets');
    const entries = (await readdir(assets)).filter((f) => /^worker-[\w-]+\.js$/.test(f));
    expect(entries).toHaveLength(1);
    // the entry loads the rest of the worker lazily: what made WebKit evaluate a split worker's entry twice
    expect(await readFile(join(assets, entries[0]!), 'utf8')).toMatch(/import\(/);
  });

  it('after the first sync, a checkout and a lookup answer from the synced data', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await openPage(context, demo);
      await waitForFirstSync(page);
      // validateCoupon, then coupon(code), both asked after the first sync finished
      await applyCoupon(page, MOCK_CODES.fixedCoupon, 25_000);
      expect(await verdictState(page), `the verdict: ${await textOf(page, 'verdict')}`).toBe('ok');
      expect((await statusOf(page)).lastError, 'the engine after the checkout').toBeNull();
      expect(await textOf(page, 'verdict-discount')).toBe('−₩3,000');
      const coupon = demo.mock.data.coupons.find((row) => row.coupon_code === MOCK_CODES.fixedCoupon)!;
      await waitForText(page, 'code-coupon-name', String(coupon.name));
    } finally {
      await context.close();
    }
  });
});
