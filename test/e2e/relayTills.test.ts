// Two tills (two browser contexts: two devices, each with its own IndexedDB) on the demo's one relay, on Chromium
// and WebKit (a shop's iPads; Firefox's feed path is every other suite's, the demo runs on its relay): one upstream
// listing for both, both converge on a change; the relay cut, both keep answering from their
// local data; the relay back, both catch up by the changes since their version, not by a new snapshot.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  attrOf,
  click,
  e2eSuite,
  fill,
  offlineBadge,
  onlineBadge,
  openTill,
  textOf,
  tid,
  verdictState,
  waitFor,
  waitForText,
} from './harness';

const LIST = '/v2/shop/coupons';

e2eSuite('two tills on one relay', { timeout: 150_000, engines: ['chromium', 'webkit'] }, (t) => {
  it('lists upstream once for both, keeps both answering while the relay is cut, and catches both up by changes', async () => {
    const { demo } = t;
    const welcome = structuredClone(demo.mock.data.coupons.find((c) => c.coupon_code === MOCK_CODES.welcomeCoupon)!);
    const [one, two] = [await demo.newContext(), await demo.newContext()];
    try {
      const tills = [await openTill(one, demo), await openTill(two, demo)];
      for (const page of tills) await waitForText(page, 'via-relay', /^via relay, version \d+$/);
      // two tills, one upstream listing of the coupons since the demo started (the relay's)
      const firstPages = demo.mock.requests.filter(
        (r) => r.path === LIST && r.query.offset === '1' && r.status === 200,
      );
      expect(firstPages).toHaveLength(1);
      const count = String(demo.mock.data.coupons.length);
      for (const page of tills) expect(await attrOf(page, tid('coupon-count'), 'data-count')).toBe(count);

      // a change made through the mock's control endpoint reaches both open tills through the relay's feed, no click
      const renamed = `${String(welcome.name)} (릴레이)`;
      for (const page of tills) await fill(page, tid('coupon-search'), MOCK_CODES.welcomeCoupon);
      const posted = await fetch(`${demo.url}/__mock/coupons`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...welcome, name: renamed }),
      });
      expect(posted.ok).toBe(true);
      for (const page of tills) await waitForText(page, 'coupon-row-name', renamed);

      // the relay cut: both go offline and keep deciding from local data
      demo.backend.setApiDown(true);
      for (const page of tills) {
        await click(page, tid('sync-now'));
        await waitFor(page, offlineBadge, 'the till shows offline once the relay is cut');
        await applyCoupon(page, MOCK_CODES.fixedCoupon, 25_000);
        expect(await verdictState(page)).toBe('ok');
        expect(await attrOf(page, tid('verdict-source'), 'data-source')).toBe('local');
      }
      await demo.screenshot(tills[1]!, 'relay-cut');

      // meanwhile upstream changes; the relay back, both catch up by changes
      const renamedAgain = `${String(welcome.name)} (돌아옴)`;
      demo.mock.upsertCoupon({ ...welcome, name: renamedAgain });
      const mark = demo.backend.relayRequests.length;
      demo.backend.setApiDown(false);
      for (const page of tills) {
        await click(page, tid('sync-now'));
        await waitFor(page, onlineBadge, 'the till shows online once the relay is back');
        await waitForText(page, 'coupon-row-name', renamedAgain);
        expect(await textOf(page, 'via-relay')).toMatch(/^via relay, version \d+$/);
      }
      const feed = demo.backend.relayRequests
        .slice(mark)
        .map((u) => new URL(u, 'http://x'))
        .filter((u) => u.pathname.endsWith('/relay/v1/feed'));
      expect(feed.some((u) => u.searchParams.has('since'))).toBe(true);
      expect(feed.filter((u) => !u.searchParams.has('since'))).toEqual([]); // no new snapshot
    } finally {
      demo.backend.setApiDown(false);
      demo.mock.upsertCoupon(welcome);
      await one.close();
      await two.close();
    }
  });
});
