// The devtools panel (shop-lookup/devtools) on the demo till (`?devtools`), in a real browser: Chromium and Firefox
// (issue 41 asks for Chromium and one other engine). It renders a synced till, a conflict between two tills' uses of
// one voucher, and an offline till, read from the panel's shadow root.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  attrOf,
  e2eSuite,
  goOffline,
  tid,
  waitForFirstSync,
  waitForPage,
  type EnginePage,
} from './harness';

const VOUCHER = MOCK_CODES.issuedUnused;

/** The text of the element with this data-testid in the devtools' shadow root (null when absent). */
const panelText = (page: EnginePage, testid: string) =>
  page.evaluate(
    (t) =>
      document
        .querySelector('[data-shop-lookup-devtools]')
        ?.shadowRoot?.querySelector(`[data-testid="${t}"]`)
        ?.textContent?.trim() ?? null,
    testid,
  );

/** Waits until the panel's element `testid` shows text matching `pattern`; says what it showed instead. */
async function waitForPanel(page: EnginePage, testid: string, pattern: RegExp): Promise<void> {
  try {
    await waitForPage(
      page,
      `devtools ${testid} ~ ${pattern}`,
      ({ t, source, flags }) =>
        new RegExp(source, flags).test(
          document
            .querySelector('[data-shop-lookup-devtools]')
            ?.shadowRoot?.querySelector(`[data-testid="${t}"]`)
            ?.textContent?.trim() ?? '',
        ),
      { t: testid, source: pattern.source, flags: pattern.flags },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; it shows ${JSON.stringify(await panelText(page, testid))}`);
  }
}

/** The panel's rows of one kind: their data attributes. */
const panelRows = (page: EnginePage, testid: string) =>
  page.evaluate(
    (t) =>
      [
        ...(document
          .querySelector('[data-shop-lookup-devtools]')
          ?.shadowRoot?.querySelectorAll(`[data-testid="${t}"]`) ?? []),
      ].map((el) => ({ ...(el as HTMLElement).dataset, text: el.textContent ?? '' }) as Record<string, string>),
    testid,
  );

e2eSuite('the devtools panel', { timeout: 150_000, engines: ['chromium', 'firefox'] }, (t) => {
  it('shows a synced till, a conflict of two tills over one voucher, then the till offline', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${demo.url}/?till=1&devtools`);
      await waitForFirstSync(page);
      // the floating toggle says the engine's state; a click opens the panel
      await waitForPage(
        page,
        'the devtools toggle',
        () =>
          Boolean(
            document
              .querySelector('[data-shop-lookup-devtools]')
              ?.shadowRoot?.querySelector('[data-testid="devtools-toggle"]'),
          ),
        null,
      );
      expect(await attrOf(page, '[data-shop-lookup-devtools]', 'data-phase')).toBe('idle');
      await page.evaluate(() =>
        (
          document
            .querySelector('[data-shop-lookup-devtools]')!
            .shadowRoot!.querySelector('[data-testid="devtools-toggle"]') as HTMLElement
        ).click(),
      );

      // synced: the source, every resource with its last sync, the records
      await waitForPanel(page, 'devtools-phase', /^idle$/);
      await waitForPanel(page, 'devtools-source', /^relay, version \d+$/);
      await waitForPanel(page, 'devtools-coupons', new RegExp(`^${demo.mock.data.coupons.length}$`));
      await waitForPanel(page, 'devtools-base-url', /^\/shop-api$/);
      const resources = await panelRows(page, 'devtools-resource');
      expect(resources.map((r) => r.key)[0]).toBe('coupons');
      expect(resources.length).toBeGreaterThan(1);
      for (const r of resources) expect(Number(r.syncedAt), r.key).toBeGreaterThan(0);
      expect(await panelText(page, 'devtools-no-errors')).toBe('none');
      await demo.screenshot(page, 'devtools-synced');

      // a conflict: this till sells the voucher, then another till (till-9) reports its own sale of it to the relay
      await applyCoupon(page, VOUCHER, 32_000);
      expect(await attrOf(page, tid('verdict'), 'data-state')).toBe('ok');
      await waitForPanel(page, 'devtools-unsent', /^0$/);
      await waitForPage(
        page,
        'till 1 shared its use',
        async () => {
          const entries = await (
            globalThis as unknown as { shopLookup: { offlineJournal(): Promise<{ shared: number | null }[]> } }
          ).shopLookup.offlineJournal();
          return entries.some((e) => e.shared !== null);
        },
        null,
      );
      const answer = await fetch(`${demo.url}/shop-api/relay/v1/uses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer till-9' },
        body: JSON.stringify({
          device: 'e2e-till-9',
          uses: [
            { entry: 'e2e-9-1', code: VOUCHER, couponCode: null, orderId: 'B-0042', at: Date.now(), override: false },
          ],
        }),
      });
      expect(answer.status).toBe(200);
      await waitForPanel(page, 'devtools-conflicts', /^1$/);
      await waitForPanel(
        page,
        'devtools-conflict',
        new RegExp(`^${VOUCHER} .* also used at till-9, .*, order B-0042$`),
      );
      const verdicts = await panelRows(page, 'devtools-verdict');
      expect(verdicts[0]?.text).toMatch(new RegExp(`${VOUCHER}.*ok −.*also at till-9`));
      await demo.screenshot(page, 'devtools-conflict');

      // offline: the state says so, the failed sync is among the last errors, the resources keep their last sync
      await goOffline(demo, page);
      await waitForPanel(page, 'devtools-phase', /^offline$/);
      await waitForPanel(page, 'devtools-errors', /network_error/);
      expect((await panelRows(page, 'devtools-resource')).every((r) => Number(r.syncedAt) > 0)).toBe(true);
      await demo.screenshot(page, 'devtools-offline');
      demo.network.restore();
    } finally {
      await context.close();
    }
  });
});
