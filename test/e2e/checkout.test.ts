// The till's checkout as a cashier reads it, on each engine: what it says to input it cannot check (an empty code,
// a negative amount) instead of leaving an old verdict or checking another amount silently, and a code field whose
// placeholder is shown whole. Read from the screen: texts, states and layout boxes (layout.ts), and screenshots.
import { expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import {
  applyCoupon,
  attrOf,
  click,
  e2eSuite,
  fill,
  isHidden,
  openTill,
  textOf,
  tid,
  verdictState,
  waitFor,
} from './harness';
import { boxesOf, overlapping, placeholderFit } from './layout';

e2eSuite('the till checkout', { timeout: 120_000 }, (t) => {
  it('says what is wrong with an empty code or a negative amount, and shows its whole placeholder', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      const fit = await placeholderFit(page, tid('coupon-code'));
      expect(fit.width, `"${fit.text}" in ${fit.room} px`).toBeLessThanOrEqual(fit.room);
      expect(await textOf(page, 'coupon-code-label')).toBe('Coupon or issued-coupon code');

      // Apply with the code field emptied: the old verdict goes, and the till says why nothing is applied
      await applyCoupon(page, MOCK_CODES.welcomeCoupon, 32_000);
      expect(await verdictState(page)).toBe('ok');
      await fill(page, tid('coupon-code'), '');
      await click(page, tid('apply-coupon'));
      await waitFor(page, '[data-testid="verdict"][data-state="needs-code"]', 'the till asks for a code');
      expect(await textOf(page, 'verdict')).toBe('Type a coupon code first: no coupon is applied.');
      expect(await isHidden(page, tid('verdict-total'))).toBe(true);
      expect(await isHidden(page, tid('code-coupon'))).toBe(true);
      await demo.screenshot(page, 'checkout-empty-code');

      // a negative amount is refused in words, never checked as 0
      await applyCoupon(page, MOCK_CODES.fixedCoupon, 25_000);
      expect(await textOf(page, 'verdict-total')).toBe('₩22,000');
      await fill(page, tid('order-amount'), '-5000');
      await waitFor(page, '[data-testid="verdict"][data-state="invalid-amount"]', 'the till refuses the amount');
      expect(await textOf(page, 'verdict')).toBe(
        'The order amount cannot be negative (−₩5,000): correct it to check the coupon.',
      );
      expect(await attrOf(page, tid('order-amount'), 'aria-invalid')).toBe('true');
      expect(await isHidden(page, tid('verdict-total'))).toBe(true);
      const parts = ['coupon-code', 'apply-coupon', 'remove-coupon', 'verdict', 'order-amount'].map(tid);
      expect(overlapping(await boxesOf(page, parts))).toEqual([]);
      await demo.screenshot(page, 'checkout-negative-amount');

      // corrected: checked again, with the amount typed
      await fill(page, tid('order-amount'), '25000');
      await waitFor(page, '[data-testid="verdict"][data-state="ok"]', 'the coupon checked again');
      expect(await textOf(page, 'verdict-total')).toBe('₩22,000');
      expect(await attrOf(page, tid('order-amount'), 'aria-invalid')).toBeNull();
    } finally {
      await context.close();
    }
  });
});
