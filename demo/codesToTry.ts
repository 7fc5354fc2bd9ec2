// The codes to try at this till (the mock's coupons and issued coupons, and what the till answers for each): a click
// puts the code into the checkout. Two tills (/?till=1, /?till=2) show the shared voucher: IC-0000-OPEN accepted at
// one is refused at the other.
import type { CodeToTry } from '../packages/mock-server/src/codesToTry';
import { h, replace } from './dom';

/** @example mountCodesToTry(el, __SHOP_DEMO__.codes, (code) => checkout.use(code)); */
export function mountCodesToTry(root: HTMLElement, codes: readonly CodeToTry[], pick: (code: string) => void): void {
  if (codes.length === 0) return void root.remove();
  replace(
    root,
    h('h2', {}, 'Codes to try'),
    h(
      'ul',
      { class: 'codes-to-try', testid: 'codes-to-try-list' },
      codes.map((c) =>
        h(
          'li',
          {
            testid: 'code-to-try',
            attrs: { 'data-code': c.code, title: 'Use this code at checkout' },
            on: { click: () => pick(c.code) },
          },
          h('code', {}, c.code),
          ' ',
          h('span', { class: 'muted' }, `${c.kind === 'issued' ? 'issued coupon' : 'coupon'}: ${c.expect}`),
        ),
      ),
    ),
  );
}
