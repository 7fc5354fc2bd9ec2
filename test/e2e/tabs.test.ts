// Three tabs of one till, on each engine: exactly one engine syncs (Web Locks leader), the others answer from the
// shared IndexedDB; when the leader's tab closes in the middle of a sync, another tab takes over within moments
// and resumes the listing where it stopped, and the third tab sees the result live.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  click,
  e2eSuite,
  fill,
  isHidden,
  openPage,
  openTill,
  tid,
  waitFor,
  waitForFirstSync,
  waitForText,
  WAIT_MS,
  type EnginePage,
} from './harness';

const LIST = '/v2/shop/coupons';

async function until(what: string, check: () => boolean | Promise<boolean>, timeout = WAIT_MS): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The page the coupon listing's checkpoint has stored, read from the tab's IndexedDB (0: none, -1: unreadable). */
function checkpointPage(page: EnginePage): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const open = indexedDB.open('shop-lookup');
        open.onerror = () => resolve(-1);
        open.onsuccess = () => {
          const db = open.result;
          const get = db.transaction('meta').objectStore('meta').get('@couponSync');
          get.onsuccess = () => {
            resolve((get.result as { page?: number } | undefined)?.page ?? 0);
            db.close();
          };
          get.onerror = () => {
            resolve(-1);
            db.close();
          };
        };
      }),
  );
}

// the till's own page-by-page listing (the leader's, resumed by the next leader): the proxy, not the relay
e2eSuite('several tabs of one till', { timeout: 150_000, demo: { source: 'direct' } }, (t) => {
  it('syncs in one tab only, and a second tab takes over mid-sync when the first closes', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    const start = demo.mock.requests.length;
    const listings = (since: number, page: string) =>
      demo.mock.requests.slice(since).filter((r) => r.path === LIST && r.query.offset === page && r.status === 200);
    try {
      const first = await openTill(context, demo);
      const others = [await openPage(context, demo), await openPage(context, demo)];
      for (const tab of others) await waitForFirstSync(tab);
      // the followers say so, the leader does not
      await waitFor(first, '[data-testid="follower"][hidden]', 'the first tab to lead');
      for (const tab of others) await waitFor(tab, '[data-testid="follower"]:not([hidden])', 'a follower chip');
      // three tabs, one listing: only the leader's first sync went to the API
      expect(listings(start, '1')).toHaveLength(1);

      const original = structuredClone(demo.mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.fixedCoupon)!);
      const renamed = `${String(original.name)} (탭 넘김)`;
      demo.mock.upsertCoupon({ ...original, name: renamed });
      const mark = demo.mock.requests.length;
      // page 2 of 3 is held at the API: the leader is mid-listing for as long as the test wants
      const page2 = demo.mock.hold({ path: /^\/v2\/shop\/coupons$/, after: 1 });
      await click(first, tid('sync-now'));
      await page2.arrived;
      // the leader has stored page 1 (its checkpoint says so in IndexedDB): close its tab now
      await waitForText(first, 'sync-progress', /Coupons: 100 \/ 240/);
      await until('page 1 in the checkpoint', async () => (await checkpointPage(first)) >= 1);
      expect(listings(mark, '1')).toHaveLength(1);
      expect(listings(mark, '2')).toHaveLength(0);
      // counted before the close: the next leader may ask for page 2 the moment the lock is free
      const closedAt = demo.mock.requests.length;
      await first.close();

      // one of the other two becomes the leader (so the closed tab's worker, which held the lock, is gone), and
      // finishes the listing from page 2
      await until(
        'a new leader',
        async () => {
          const chips = await Promise.all(others.map((tab) => isHidden(tab, tid('follower'))));
          return chips.filter(Boolean).length === 1;
        },
        10_000,
      );
      // only now: released earlier, a worker that outlived its tab for a moment could still store page 2
      page2.release(); // its client is gone: nobody reads this answer (it was counted before closedAt)
      await until('the listing to resume at page 2', () => listings(closedAt, '3').length === 1);
      expect(listings(closedAt, '1')).toHaveLength(0); // resumed, not started over
      expect(listings(closedAt, '2')).toHaveLength(1);

      // both remaining tabs show the renamed coupon without a reload
      for (const tab of others) {
        await fill(tab, tid('coupon-search'), MOCK_CODES.fixedCoupon);
        await waitForText(tab, 'coupon-row-name', renamed);
      }
      await demo.screenshot(others[0]!, 'tabs-after-handover');
      demo.mock.upsertCoupon(original);
    } finally {
      await context.close();
    }
  });
});
