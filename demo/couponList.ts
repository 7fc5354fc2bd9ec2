// Every coupon of the shop (lookup 1, live), searchable by name or code. A click puts the code into the checkout.
import type { Coupon, LookupResult, ShopLookup } from 'shop-lookup';
import type { Subscription } from 'rxjs';
import { h, replace } from './dom';
import { discountText, minimumText, statusText } from './format';
import { resultMeta } from './resultMeta';

const SHOWN = 60;

/** @example mountCouponList(el, lookup, (code) => checkout.use(code)); */
export function mountCouponList(root: HTMLElement, lookup: ShopLookup, pick: (code: string) => void): Subscription {
  const count = h('span', { class: 'count', testid: 'coupon-count' }, '…');
  const search = h('input', {
    testid: 'coupon-search',
    attrs: { type: 'search', placeholder: 'Search name or code', autocomplete: 'off' },
  });
  const body = h('tbody', { testid: 'coupon-list' });
  const more = h('p', { class: 'muted', testid: 'coupon-more' });
  const metaBox = h('div', { testid: 'coupons-meta' });
  replace(
    root,
    h('h2', {}, 'Coupons ', count),
    search,
    metaBox,
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'coupons' },
        h(
          'thead',
          {},
          h('tr', {}, h('th', {}, 'Coupon'), h('th', {}, 'Discount'), h('th', {}, 'Minimum'), h('th', {}, 'Status')),
        ),
        body,
      ),
    ),
    more,
  );

  let all: Coupon[] = [];
  const render = () => {
    const q = search.value.trim().toLowerCase();
    const hits =
      q === ''
        ? all
        : all.filter((c) => c.coupon_code.toLowerCase().includes(q) || (c.name ?? '').toLowerCase().includes(q));
    count.textContent = `${all.length}`;
    count.dataset.count = String(all.length);
    replace(
      body,
      hits.slice(0, SHOWN).map((c) => {
        const status = statusText(c.status);
        return h(
          'tr',
          {
            testid: 'coupon-row',
            attrs: { 'data-code': c.coupon_code, title: 'Use this code at checkout' },
            on: { click: () => pick(c.coupon_code) },
          },
          h(
            'td',
            {},
            h('div', { class: 'coupon-name', testid: 'coupon-row-name' }, c.name ?? '(no name)'),
            h('code', {}, c.coupon_code),
          ),
          h('td', { testid: 'coupon-row-discount' }, discountText(c)),
          h('td', {}, minimumText(c)),
          h(
            'td',
            {},
            h('span', { class: `pill s-${(c.status ?? 'none').toLowerCase()}`, testid: 'coupon-row-status' }, status),
          ),
        );
      }),
    );
    more.textContent =
      hits.length > SHOWN
        ? `Showing ${SHOWN} of ${hits.length}: refine the search.`
        : hits.length === 0
          ? 'No coupon matches.'
          : `${hits.length} shown.`;
  };
  search.addEventListener('input', render);
  return lookup.coupons().subscribe((r: LookupResult<Coupon[]>) => {
    all = r.data;
    render();
    replace(metaBox, resultMeta(r, 'coupons-meta'));
  });
}
