// Issue "Offline coupon validation", as a cashier lives it: the till synced, then the network goes; a valid
// code still takes its discount off, an expired one and an unknown one are refused with the reason in words,
// and once the network is back the offline journal lists every verdict given without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_CODES } from '../../mock-server';
import { applyCoupon, openTill, screenshot, startDemo, textOf, tid, waitForText, waitUntil, type Demo } from './harness';

let demo: Demo;
beforeAll(async () => {
  demo = await startDemo();
}, 120_000);
afterAll(async () => {
  await demo?.close();
}, 60_000);

describe('cashier at an offline till', { timeout: 120_000 }, () => {
  it('validates coupons offline (valid, expired, unknown) and journals the verdicts', async () => {
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      await page.locator('[data-testid="journal-note"][data-count="0"]').waitFor();

      await context.setOffline(true);
      await waitUntil(page, '[data-testid="net-badge"][data-state="offline"]', 'the till shows offline');

      // a valid coupon: 10 % of 32,000, decided from local data, with its age
      await applyCoupon(page, MOCK_CODES.welcomeCoupon, 32_000);
      expect(await tid(page, 'verdict').getAttribute('data-state')).toBe('ok');
      expect(await textOf(page, 'verdict-name')).toBe('신규가입 10% 할인');
      expect(await textOf(page, 'verdict-discount')).toBe('−₩3,200');
      expect(await textOf(page, 'verdict-total')).toBe('₩28,800');
      expect(await tid(page, 'verdict-source').getAttribute('data-source')).toBe('local');
      expect(await textOf(page, 'verdict-synced')).toMatch(/^data from (just now|\d+ min ago)$/);
      await screenshot(page, 'cashier-offline-valid');

      // an expired coupon (its period ended in 2025; its status still says "progress")
      await applyCoupon(page, MOCK_CODES.expiredCoupon, 60_000);
      expect(await tid(page, 'verdict').getAttribute('data-state')).toBe('rejected');
      expect(await tid(page, 'verdict').getAttribute('data-reason')).toBe('expired');
      expect(await textOf(page, 'verdict-reason')).toBe('Expired');
      expect((await textOf(page, 'verdict-message')).length).toBeGreaterThan(10);
      expect(await textOf(page, 'verdict-total')).toBe('₩60,000');
      await screenshot(page, 'cashier-offline-expired');

      // a code this till has never seen: it cannot say "no such coupon" without the API
      await applyCoupon(page, 'NEWCODE-2026', 32_000);
      expect(await tid(page, 'verdict').getAttribute('data-state')).toBe('rejected');
      expect(await tid(page, 'verdict').getAttribute('data-reason')).toBe('unknown_offline');
      expect(await textOf(page, 'verdict-reason')).toBe('Unknown code (offline)');
      expect((await textOf(page, 'verdict-message')).length).toBeGreaterThan(10);
      await screenshot(page, 'cashier-offline-unknown');

      // back online: the journal holds the three offline verdicts, oldest last on screen
      await context.setOffline(false);
      await waitUntil(page, '[data-testid="net-badge"][data-state="online"]', 'the till shows online again');
      await tid(page, 'journal-refresh').click();
      await page.locator('[data-testid="journal-note"][data-count="3"]').waitFor();
      const entries = tid(page, 'journal-entry');
      const seen = await entries.evaluateAll((rows) =>
        rows.map((r) => ({ code: r.getAttribute('data-code'), ok: r.getAttribute('data-ok'), reason: r.getAttribute('data-reason') })),
      );
      expect(seen).toEqual([
        { code: 'NEWCODE-2026', ok: 'false', reason: 'unknown_offline' },
        { code: MOCK_CODES.expiredCoupon, ok: 'false', reason: 'expired' },
        { code: MOCK_CODES.welcomeCoupon, ok: 'true', reason: '' },
      ]);
      await waitForText(page, 'journal-entry', '−₩3,200');
      await screenshot(page, 'cashier-journal');

      await tid(page, 'journal-clear').click();
      await page.locator('[data-testid="journal-note"][data-count="0"]').waitFor();
    } finally {
      await context.close();
    }
  });
});
