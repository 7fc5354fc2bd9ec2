// Issue "Offline coupon validation", as a cashier lives it, on each engine: the till synced, then the network goes
// (networkCut.ts); a valid code still takes its discount off, an expired one and an unknown one are refused with
// the reason in words, and once the network is back the offline journal lists every verdict given without it.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  attrOf,
  click,
  e2eSuite,
  goOffline,
  goOnline,
  openTill,
  textOf,
  tid,
  verdictState,
  waitFor,
  waitForText,
} from './harness';

e2eSuite('cashier at an offline till', { timeout: 120_000 }, (t) => {
  it('validates coupons offline (valid, expired, unknown) and journals the verdicts', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      await waitFor(page, '[data-testid="journal-note"][data-count="0"]', 'an empty journal');

      await goOffline(demo, page);

      // a valid coupon: 10 % of 32,000, decided from local data, with its age
      await applyCoupon(page, MOCK_CODES.welcomeCoupon, 32_000);
      expect(await verdictState(page)).toBe('ok');
      expect(await textOf(page, 'verdict-name')).toBe('신규가입 10% 할인');
      expect(await textOf(page, 'verdict-discount')).toBe('−₩3,200');
      expect(await textOf(page, 'verdict-total')).toBe('₩28,800');
      expect(await attrOf(page, tid('verdict-source'), 'data-source')).toBe('local');
      expect(await textOf(page, 'verdict-synced')).toMatch(/^data from (just now|\d+ min ago)$/);
      await demo.screenshot(page, 'cashier-offline-valid');

      // an expired coupon (its period ended in 2025; its status still says "progress")
      await applyCoupon(page, MOCK_CODES.expiredCoupon, 60_000);
      expect(await verdictState(page)).toBe('rejected');
      expect(await attrOf(page, tid('verdict'), 'data-reason')).toBe('expired');
      expect(await textOf(page, 'verdict-reason')).toBe('Expired');
      expect((await textOf(page, 'verdict-message')).length).toBeGreaterThan(10);
      expect(await textOf(page, 'verdict-total')).toBe('₩60,000');
      await demo.screenshot(page, 'cashier-offline-expired');

      // a code this till has never seen: it cannot say "no such coupon" without the API
      await applyCoupon(page, 'NEWCODE-2026', 32_000);
      expect(await verdictState(page)).toBe('rejected');
      expect(await attrOf(page, tid('verdict'), 'data-reason')).toBe('unknown_offline');
      expect(await textOf(page, 'verdict-reason')).toBe('Unknown code (offline)');
      expect((await textOf(page, 'verdict-message')).length).toBeGreaterThan(10);
      await demo.screenshot(page, 'cashier-offline-unknown');

      // back online: the journal holds the three offline verdicts, oldest last on screen
      await goOnline(demo, page);
      await click(page, tid('journal-refresh'));
      await waitFor(page, '[data-testid="journal-note"][data-count="3"]', 'three verdicts in the journal');
      const seen = await page.evaluate(() =>
        [...document.querySelectorAll('[data-testid="journal-entry"]')].map((r) => ({
          code: r.getAttribute('data-code'),
          ok: r.getAttribute('data-ok'),
          reason: r.getAttribute('data-reason'),
        })),
      );
      expect(seen).toEqual([
        { code: 'NEWCODE-2026', ok: 'false', reason: 'unknown_offline' },
        { code: MOCK_CODES.expiredCoupon, ok: 'false', reason: 'expired' },
        { code: MOCK_CODES.welcomeCoupon, ok: 'true', reason: '' },
      ]);
      await waitForText(page, 'journal-entry', '−₩3,200');
      await demo.screenshot(page, 'cashier-journal');

      await click(page, tid('journal-clear'));
      await waitFor(page, '[data-testid="journal-note"][data-count="0"]', 'the journal cleared');
    } finally {
      demo.network.restore();
      await context.close();
    }
  });
});
