// Two tills of the demo (two browser contexts, opened as /?till=1 and /?till=2) on its one relay, on Chromium and
// WebKit (a shop's iPads): a voucher accepted at till 1 (picked from the codes to try it lists) is refused at till 2,
// naming till 1, as the page shows it; asked at once, the relay's claim gives one of them the yes; a sale voided at
// till 1 (by releaseCoupon, and by the cashier's "Void sale") makes the voucher a plain yes at till 2.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  attrOf,
  click,
  e2eSuite,
  readIndexedDb,
  textOf,
  textsOf,
  tid,
  waitFor,
  waitForFirstSync,
  waitForPage,
  type EngineContext,
} from './harness';

const VOUCHER = MOCK_CODES.issuedUnused;

e2eSuite('a voucher shared between two tills', { timeout: 150_000, engines: ['chromium', 'webkit'] }, (t) => {
  const openTillNo = async (context: EngineContext, no: number) => {
    const page = await context.newPage();
    await page.goto(`${t.demo.url}/?till=${no}`);
    await waitForFirstSync(page);
    return page;
  };

  it('refuses at till 2 a voucher till 1 accepted, naming till 1', async () => {
    const { demo } = t;
    const [a, b] = [await demo.newContext(), await demo.newContext()];
    try {
      const one = await openTillNo(a, 1);
      const two = await openTillNo(b, 2);
      // the till lists the codes to try (the mock's): the cashier picks the voucher there
      const listed = await textsOf(one, tid('code-to-try'));
      expect(listed[0]).toMatch(/^WELCOME10\s+coupon: 10 % off/);
      expect(listed).toContainEqual(expect.stringMatching(/^IC-0000-OPEN\s+issued coupon: single use/));
      await click(one, `[data-testid="code-to-try"][data-code="${VOUCHER}"]`);
      expect(
        await one.evaluate(() => document.querySelector<HTMLInputElement>('[data-testid="coupon-code"]')!.value),
      ).toBe(VOUCHER);
      await applyCoupon(one, VOUCHER, 32_000);
      expect(await attrOf(one, tid('verdict'), 'data-state')).toBe('ok');
      // till 1 sent it (its journal entry is shared); till 2's feed reached the relay's version after it
      await waitForPage(
        one,
        'till 1 shared its use',
        async () => {
          const entries = await (
            globalThis as unknown as { shopLookup: { offlineJournal(): Promise<{ shared: number | null }[]> } }
          ).shopLookup.offlineJournal();
          return entries.some((e) => e.shared !== null);
        },
        null,
      );
      const { version } = (await (await fetch(`${demo.url}/shop-api/relay/v1/status`)).json()) as { version: number };
      await waitForPage(
        two,
        'till 2 heard the relay at its version',
        (v) =>
          Number(
            /version (\d+)/.exec(document.querySelector('[data-testid="via-relay"]')?.textContent ?? '')?.[1] ?? 0,
          ) >= v,
        version,
      );
      await applyCoupon(two, VOUCHER, 32_000);
      await waitFor(two, '[data-testid="verdict"][data-reason="used_on_another_till"]', 'till 2 refuses the voucher');
      expect(await textOf(two, 'verdict-reason')).toBe('Already used on another till');
      expect(await textOf(two, 'verdict-message')).toMatch(/^Till till-1 accepted this issued coupon at /);
      await demo.screenshot(two, 'voucher-used-at-another-till');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("two tills asking for one voucher at once: the relay's claim gives one yes; released at its till, the other till's next sale is a yes", async () => {
    const { demo } = t;
    const open = demo.mock.data.issuedCoupons.find((c) => c.coupon_issue_code === VOUCHER)!;
    const code = 'IC-E2E-CLAIM-1';
    demo.mock.upsertIssuedCoupon({ ...open, coupon_issue_code: code });
    const [a, b] = [await demo.newContext(), await demo.newContext()];
    try {
      const one = await openTillNo(a, 1);
      const two = await openTillNo(b, 2);
      type Verdict = { ok: boolean; reason?: string; claim?: string };
      const ask = (page: typeof one, orderId: string) =>
        page.evaluate(
          async ({ code, orderId }) => {
            const lookup = (
              globalThis as unknown as { shopLookup: { validateCoupon(c: string, o: object): Promise<Verdict> } }
            ).shopLookup;
            const v = await lookup.validateCoupon(code, { amount: 32_000, orderId });
            return { ok: v.ok, reason: v.reason, claim: v.claim };
          },
          { code, orderId },
        );
      const verdicts = await Promise.all([ask(one, 'A-1'), ask(two, 'B-1')]);
      expect(verdicts.filter((v) => v.ok)).toEqual([{ ok: true, claim: 'granted' }]);
      expect(verdicts.find((v) => !v.ok)).toMatchObject({ reason: 'used_on_another_till' });
      const [seller, other, order] = verdicts[0]!.ok ? [one, two, 'A-1'] : [two, one, 'B-1'];
      // the sale is voided at the till that made it
      const released = await seller.evaluate(
        ({ code, order }) =>
          (
            globalThis as unknown as {
              shopLookup: { releaseCoupon(c: string, o: object): Promise<{ released: number }> };
            }
          ).shopLookup.releaseCoupon(code, { orderId: order }),
        { code, order },
      );
      expect(released).toMatchObject({ released: 1 });
      // the release reaches the relay; the other till's copy loses the use (the feed); its next sale is a yes
      const otherDb = `shop-lookup:till-${other === one ? 1 : 2}`;
      const deadline = Date.now() + 30_000;
      while ((await readIndexedDb(other, otherDb, 'sharedUses', code)).rows?.length !== 0) {
        if (Date.now() > deadline) throw new Error('timed out waiting for the other till to hear the release');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await ask(other, 'C-1')).toEqual({ ok: true, claim: 'granted' });
    } finally {
      await a.close();
      await b.close();
    }
  });
  it("a sale voided at its till (the cashier's Void sale) gives the voucher back: the other till's sale of it is a yes", async () => {
    const { demo } = t;
    const open = demo.mock.data.issuedCoupons.find((c) => c.coupon_issue_code === VOUCHER)!;
    const code = 'IC-E2E-VOID-1';
    demo.mock.upsertIssuedCoupon({ ...open, coupon_issue_code: code });
    const [a, b] = [await demo.newContext(), await demo.newContext()];
    try {
      const one = await openTillNo(a, 1);
      const two = await openTillNo(b, 2);
      await applyCoupon(one, code, 32_000);
      expect(await attrOf(one, tid('verdict'), 'data-state')).toBe('ok');
      await applyCoupon(two, code, 20_000);
      expect(await attrOf(two, tid('verdict'), 'data-reason')).toBe('used_on_another_till');
      // the cashier at till 1 voids the sale
      await click(one, tid('void-sale'));
      await waitFor(one, '[data-testid="verdict"][data-state="released"]', 'till 1 voids the sale');
      expect(await textOf(one, 'void-result')).toMatch(new RegExp(`^Sale voided: ${code} is given back`));
      // till 2 hears the release (the feed) and its next sale of the voucher is a yes
      const deadline = Date.now() + 30_000;
      while ((await readIndexedDb(two, 'shop-lookup:till-2', 'sharedUses', code)).rows?.length !== 0) {
        if (Date.now() > deadline) throw new Error('timed out waiting for till 2 to hear the release');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await applyCoupon(two, code, 20_000);
      expect(await attrOf(two, tid('verdict'), 'data-state')).toBe('ok');
      await demo.screenshot(one, 'sale-voided');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
