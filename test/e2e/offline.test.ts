// The built demo till without a network, on each engine: the network cut (every connection to the server dropped,
// the same way on every engine: networkCut.ts), a reload while cut off (the app shell from the service worker that
// vite-plugin-pwa builds), the network back; and the page's "cut the API" switch.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  attrOf,
  click,
  e2eSuite,
  fill,
  goOffline,
  goOnline,
  lockHolders,
  markDocument,
  offlineBadge,
  onlineBadge,
  openTill,
  sameDocument,
  textOf,
  tid,
  verdictState,
  waitFor,
  waitForPage,
  waitForText,
} from './harness';
import { unreadableTexts } from './contrast';

e2eSuite('demo page offline', { timeout: 120_000, demo: { built: true } }, (t) => {
  it('keeps answering offline and after a reload offline, then picks up changes when back online', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    const welcome = structuredClone(demo.mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!);
    try {
      const page = await openTill(context, demo);
      const syncedAt = await attrOf(page, tid('synced-coupons'), 'data-at');
      const count = String(demo.mock.data.coupons.length);

      await goOffline(demo, page);
      await applyCoupon(page, MOCK_CODES.welcomeCoupon, 32_000);
      expect(await verdictState(page)).toBe('ok');
      expect(await textOf(page, 'verdict-discount')).toBe('−₩3,200');
      expect(await attrOf(page, tid('verdict-source'), 'data-source')).toBe('local');
      expect(await textOf(page, 'verdict-synced')).toMatch(/^data from (just now|\d+ min ago)$/);
      // the engine itself found out: the lookups now say their answers are local data
      await waitFor(page, '[data-testid="coupons-meta"][data-offline="true"]', 'the coupon list says it is local data');
      expect(await attrOf(page, tid('coupon-count'), 'data-count')).toBe(count);
      expect(await textOf(page, 'last-synced')).toMatch(/Coupons synced (just now|\d+ min ago)/);
      await demo.screenshot(page, 'offline');

      // a reload with no network: the page and the worker come from the service worker, the data from IndexedDB
      await page.reload();
      await waitFor(page, offlineBadge, 'the page reloaded offline shows offline');
      await waitFor(page, `[data-testid="coupon-count"][data-count="${count}"]`, 'every coupon, from IndexedDB');
      expect(await attrOf(page, tid('synced-coupons'), 'data-at')).toBe(syncedAt);
      const clients = await lockHolders(page); // the engine's worker started again, from the cache
      expect(clients.engine).toEqual(expect.any(String));
      expect(clients.engine).not.toBe(clients.page);
      await applyCoupon(page, MOCK_CODES.welcomeCoupon, 32_000);
      expect(await verdictState(page)).toBe('ok');
      expect(await textOf(page, 'verdict-total')).toBe('₩28,800');
      await demo.screenshot(page, 'offline-reloaded');

      // meanwhile the shop renames the coupon; back online, the page shows it without a reload
      const renamed = `${String(welcome.name)} (리뉴얼)`;
      demo.mock.upsertCoupon({ ...welcome, name: renamed });
      await markDocument(page);
      await fill(page, tid('coupon-search'), MOCK_CODES.welcomeCoupon);
      await goOnline(demo, page);
      await waitForText(page, 'coupon-row-name', renamed);
      await waitForText(page, 'code-coupon-name', renamed);
      expect(await sameDocument(page)).toBe(true);
      // and a full sync ran again: "coupons synced" moves on
      await waitForPage(
        page,
        'coupons synced again',
        (before) => Number(document.querySelector('[data-testid="synced-coupons"]')?.getAttribute('data-at')) > before,
        Number(syncedAt),
      );
      await demo.screenshot(page, 'back-online');
    } finally {
      demo.network.restore();
      demo.mock.upsertCoupon(welcome);
      await context.close();
    }
  });

  it('the "cut the API" switch makes the page offline while lookups keep answering', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      await click(page, `${tid('api-switch-box')} label.switch`);
      await waitFor(page, '[data-testid="api-switch-box"][data-down="true"]', 'the switch shows the API cut');
      expect(demo.backend.apiDown).toBe(true);
      // counted from the cut on: a page request of the relay's listing that arrived before the click is no leak
      const before = demo.mock.requests.length;
      await waitFor(page, offlineBadge, 'the page shows offline once the API is cut');
      expect(await textOf(page, 'net-badge')).toBe('Offline (API unreachable)');

      await applyCoupon(page, MOCK_CODES.fixedCoupon, 25_000);
      expect(await verdictState(page)).toBe('ok');
      expect(await textOf(page, 'verdict-discount')).toBe('−₩3,000');
      expect(await attrOf(page, tid('verdict-source'), 'data-source')).toBe('local');
      expect(await attrOf(page, tid('coupon-count'), 'data-count')).toBe(String(demo.mock.data.coupons.length));
      // nothing got through to the API while it was cut
      expect(demo.mock.requests.slice(before).filter((r) => r.status === 200)).toEqual([]);
      // the header in its offline state (badge, switch, its note) stays readable: WCAG AA, 4.5:1
      expect(await unreadableTexts(page, '.topbar')).toEqual([]);
      await demo.screenshot(page, 'api-cut');

      await click(page, `${tid('api-switch-box')} label.switch`);
      await waitFor(page, '[data-testid="api-switch-box"][data-down="false"]', 'the switch shows the API back');
      await waitFor(page, onlineBadge, 'the page shows online once the API is back');
      await waitFor(page, '[data-testid="status"][data-phase="idle"]', 'a sync completes once the API is back');
    } finally {
      demo.backend.setApiDown(false);
      await context.close();
    }
  });
});
