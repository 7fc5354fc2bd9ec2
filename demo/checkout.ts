// The checkout: order lines and amount, the coupon field, the verdict (validateCoupon, with this sale's order id) and
// what the two code lookups (coupon, issuedCoupon) know about the code, live; an accepted issued coupon's sale can be
// voided (releaseCoupon: the voucher goes back to every till).
import type { CouponVerdict, IssuedCoupon, LookupResult, ShopLookup, Coupon } from 'shop-lookup';
import { Subscription } from 'rxjs';
import { stampAgo } from './clock';
import { h, replace } from './dom';
import { discountText, minimumText, periodText, reasonText, statusText, textField, won } from './format';
import { resultMeta } from './resultMeta';

export interface Checkout {
  /** Adds a product line and its price to the order amount. */
  addLine(label: string, price: number): void;
  subscription: Subscription;
}

function field(label: string, control: HTMLElement): HTMLElement {
  return h('label', { class: 'field' }, h('span', {}, label), control);
}

function check(label: string, testid: string): [HTMLLabelElement, HTMLInputElement] {
  const box = h('input', { testid, attrs: { type: 'checkbox' } });
  return [h('label', { class: 'check' }, box, label), box];
}

function couponCard(r: LookupResult<Coupon | null>, code: string): HTMLElement[] {
  const c = r.data;
  if (!c) {
    const why =
      r.syncedAt === null
        ? r.offline
          ? 'Not known locally (offline).'
          : 'Looking it up…'
        : 'Not a coupon code of this shop.';
    return [h('p', { class: 'muted', testid: 'code-coupon-none' }, `${code}: ${why}`)];
  }
  return [
    h('div', { class: 'card-title', testid: 'code-coupon-name' }, c.name ?? c.coupon_code),
    h(
      'dl',
      {},
      h('dt', {}, 'Code'),
      h('dd', { testid: 'code-coupon-code' }, c.coupon_code),
      h('dt', {}, 'Discount'),
      h('dd', { testid: 'code-coupon-discount' }, discountText(c)),
      h('dt', {}, 'Minimum'),
      h('dd', {}, minimumText(c)),
      h('dt', {}, 'Status'),
      h('dd', { testid: 'code-coupon-status' }, statusText(c.status)),
      h('dt', {}, 'Period'),
      h('dd', {}, periodText(c.use_period)),
      h('dt', {}, 'Rules'),
      h(
        'dd',
        {},
        [c.use_app ? 'app only' : 'any channel', c.is_duplication ? 'combinable' : 'not combinable'].join(' · '),
      ),
    ),
  ];
}

function issuedCard(r: LookupResult<IssuedCoupon | null>, code: string): HTMLElement[] {
  const c = r.data;
  if (!c) {
    const why =
      r.syncedAt === null
        ? r.offline
          ? 'Not known locally (offline).'
          : 'Looking it up…'
        : 'Not an issued-coupon code.';
    return [h('p', { class: 'muted', testid: 'code-issued-none' }, `${code}: ${why}`)];
  }
  const field = (name: string) => textField(c, name);
  const status = field('status');
  const used = status.toLowerCase() === 'complete' || field('use_date') !== '';
  return [
    h('div', { class: 'card-title', testid: 'code-issued-name' }, field('name') || field('coupon_issue_code') || code),
    h(
      'dl',
      {},
      h('dt', {}, 'Issue code'),
      h('dd', { testid: 'code-issued-code' }, field('coupon_issue_code') || code),
      h('dt', {}, 'Of coupon'),
      h('dd', {}, field('coupon_code') || '—'),
      h('dt', {}, 'Discount'),
      h('dd', {}, discountText(c)),
      h('dt', {}, 'State'),
      h('dd', { testid: 'code-issued-status' }, `${used ? 'used' : 'unused'} (${statusText(status)})`),
      used && h('dt', {}, 'Order'),
      used &&
        h('dd', { testid: 'code-issued-order' }, `${field('shop_order_code') || '—'} at ${field('use_date') || '—'}`),
    ),
  ];
}

/** @example const checkout = mountCheckout(el, lookup, { onVerdict: () => journal.refresh() }); */
export function mountCheckout(root: HTMLElement, lookup: ShopLookup, hooks: { onVerdict(): void }): Checkout {
  const lines = h('ul', { class: 'order-lines', testid: 'order-lines' });
  const amount = h('input', {
    testid: 'order-amount',
    attrs: { type: 'number', min: 0, step: 100, value: 32000, inputmode: 'numeric' },
  });
  const [appLabel, app] = check('App order', 'flag-app');
  const [otherLabel, other] = check('Another discount applied', 'flag-other-discount');
  // what the field takes is its label; the placeholder is a short example that fits the field
  const code = h('input', {
    testid: 'coupon-code',
    attrs: { id: 'coupon-code', type: 'text', placeholder: 'e.g. WELCOME10', autocomplete: 'off', spellcheck: 'false' },
  });
  const codeLabel = h(
    'label',
    { class: 'field-label', testid: 'coupon-code-label', attrs: { for: 'coupon-code' } },
    'Coupon or issued-coupon code',
  );
  const apply = h('button', { class: 'primary', testid: 'apply-coupon', attrs: { type: 'submit' } }, 'Apply');
  const clear = h('button', { class: 'ghost', testid: 'remove-coupon', attrs: { type: 'button' } }, 'Remove');
  const verdictBox = h('div', { class: 'verdict', testid: 'verdict', attrs: { 'aria-live': 'polite' } });
  verdictBox.dataset.state = 'idle';
  const couponBox = h('div', { class: 'card', testid: 'code-coupon' });
  const issuedBox = h('div', { class: 'card', testid: 'code-issued' });
  const details = h(
    'div',
    { class: 'code-details', attrs: { hidden: true } },
    h('h3', {}, 'What the lookups know about this code'),
    h(
      'div',
      { class: 'two' },
      h('div', {}, h('h4', {}, 'coupon(code)'), couponBox),
      h('div', {}, h('h4', {}, 'issuedCoupon(code)'), issuedBox),
    ),
  );
  const form = h('form', { class: 'coupon-form', testid: 'coupon-form' }, code, apply, clear);
  replace(
    root,
    h('h2', {}, 'Checkout'),
    lines,
    h('div', { class: 'row' }, field('Order amount (₩)', amount)),
    h('div', { class: 'row checks' }, appLabel, otherLabel),
    codeLabel,
    form,
    verdictBox,
    details,
  );

  const subscription = new Subscription();
  let watching: Subscription | null = null;
  let applied: string | null = null;
  /** This sale's order id: a new sale (a new one) whenever another code is applied or the coupon removed. */
  const newOrderId = () => `sale-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  let orderId = newOrderId();
  let sequence = 0;
  let linesTotal = 0;

  function showVerdict(v: CouponVerdict, orderAmount: number): void {
    const c = v.coupon;
    const name = (c && (textField(c, 'name') || textField(c, 'coupon_issue_code'))) || applied || '';
    const synced = h('span', { testid: 'verdict-synced' });
    stampAgo(synced, v.syncedAt, 'data from ');
    if (v.syncedAt === null) synced.textContent = 'no confirmed data';
    const source = h(
      'span',
      { class: `chip ${v.source === 'local' ? 'off' : ''}`, testid: 'verdict-source' },
      v.source === 'local' ? 'decided from local data' : 'checked with the shop API',
    );
    source.dataset.source = v.source;
    const message = v.detail?.message
      ? h('p', { class: 'verdict-message', testid: 'verdict-message' }, v.detail.message)
      : null;
    verdictBox.dataset.state = v.ok ? 'ok' : 'rejected';
    verdictBox.dataset.reason = v.ok ? '' : v.reason;
    if (v.ok) {
      replace(
        verdictBox,
        h(
          'div',
          { class: 'verdict-head' },
          h('span', { class: 'mark' }, '✓'),
          h('strong', { testid: 'verdict-name' }, name),
          h('span', { testid: 'verdict-reason' }, 'applies'),
        ),
        h(
          'div',
          { class: 'totals' },
          h('span', {}, 'Amount ', h('b', {}, won(orderAmount))),
          h('span', {}, 'Discount ', h('b', { testid: 'verdict-discount' }, `−${won(v.discount)}`)),
          h(
            'span',
            { class: 'pay' },
            'To pay ',
            h('b', { testid: 'verdict-total' }, won(Math.max(0, orderAmount - v.discount))),
          ),
        ),
        message,
        h('div', { class: 'meta' }, source, synced),
        v.kind === 'issued' ? voidButton(applied ?? '') : null,
      );
    } else {
      replace(
        verdictBox,
        h(
          'div',
          { class: 'verdict-head' },
          h('span', { class: 'mark' }, '✗'),
          h('strong', { testid: 'verdict-name' }, name),
          h('span', { testid: 'verdict-reason' }, reasonText(v.reason)),
        ),
        message,
        h(
          'div',
          { class: 'totals' },
          h('span', { class: 'pay' }, 'To pay ', h('b', { testid: 'verdict-total' }, won(orderAmount))),
        ),
        h('div', { class: 'meta' }, source, synced),
      );
    }
  }

  /** "Void sale": the accepted voucher given back (releaseCoupon with this sale's order id), offline too. */
  function voidButton(voucher: string): HTMLElement {
    const button = h('button', { class: 'ghost', testid: 'void-sale', attrs: { type: 'button' } }, 'Void sale');
    const sale = orderId;
    button.addEventListener('click', async () => {
      sequence++; // a check still under way answers into nothing
      try {
        const r = await lookup.releaseCoupon(voucher, { orderId: sale });
        verdictBox.dataset.state = 'released';
        replace(
          verdictBox,
          h(
            'p',
            { class: 'verdict-message', testid: 'void-result' },
            r.released > 0
              ? `Sale voided: ${voucher} is given back. Every till may take it again (sent to the relay now, or when this till is back online).`
              : `Nothing to give back: this till holds no use of ${voucher} for this sale.`,
          ),
        );
      } catch (error) {
        replace(
          verdictBox,
          h('p', { class: 'err', testid: 'void-result' }, `Could not void the sale: ${(error as Error)?.message}`),
        );
      } finally {
        orderId = newOrderId();
        hooks.onVerdict();
      }
    });
    return h('div', { class: 'row' }, button);
  }

  /** Says in the verdict's place why there is no verdict (the old one goes: it no longer fits the screen). */
  function explain(state: 'needs-code' | 'invalid-amount', text: string): void {
    sequence++; // a check still under way answers into nothing
    verdictBox.dataset.state = state;
    verdictBox.dataset.reason = '';
    replace(verdictBox, h('p', { class: 'verdict-message', testid: 'verdict-explain' }, text));
  }

  /** The order amount typed, or null (said in words) when it cannot be checked against. */
  function orderAmountOrExplain(): number | null {
    const typed = amount.value.trim() === '' ? 0 : Number(amount.value);
    const wrong = !Number.isFinite(typed)
      ? 'The order amount is not a number: correct it to check the coupon.'
      : typed < 0
        ? `The order amount cannot be negative (−${won(-typed)}): correct it to check the coupon.`
        : null;
    if (wrong) amount.setAttribute('aria-invalid', 'true');
    else amount.removeAttribute('aria-invalid');
    if (wrong && applied !== null) explain('invalid-amount', wrong);
    return wrong ? null : typed;
  }

  async function validate(): Promise<void> {
    const orderAmount = orderAmountOrExplain();
    if (applied === null || orderAmount === null) return;
    const mine = ++sequence;
    verdictBox.dataset.state = 'pending';
    replace(verdictBox, h('p', { class: 'muted' }, `Checking ${applied}…`));
    try {
      const v = await lookup.validateCoupon(applied, {
        amount: orderAmount,
        orderId,
        app: app.checked,
        otherDiscount: other.checked,
      });
      if (mine === sequence) showVerdict(v, orderAmount);
    } catch (error) {
      if (mine !== sequence) return;
      verdictBox.dataset.state = 'error';
      replace(
        verdictBox,
        h(
          'p',
          { class: 'err', testid: 'verdict-error' },
          `Could not check the coupon: ${(error as Error)?.message ?? String(error)}`,
        ),
      );
    } finally {
      hooks.onVerdict();
    }
  }

  /** Follows the code through the two single-code lookups while it is applied. */
  function watch(c: string): void {
    watching?.unsubscribe();
    watching = new Subscription();
    details.hidden = false;
    replace(couponBox, h('p', { class: 'muted' }, '…'));
    replace(issuedBox, h('p', { class: 'muted' }, '…'));
    watching.add(
      lookup.coupon(c).subscribe((r) => replace(couponBox, couponCard(r, c), resultMeta(r, 'code-coupon-meta'))),
    );
    watching.add(
      lookup.issuedCoupon(c).subscribe((r) => replace(issuedBox, issuedCard(r, c), resultMeta(r, 'code-issued-meta'))),
    );
  }

  /** No coupon applied any more: its verdict and what the lookups know about it go. */
  function removeCoupon(): void {
    applied = null;
    orderId = newOrderId();
    sequence++;
    watching?.unsubscribe();
    watching = null;
    details.hidden = true;
    verdictBox.dataset.state = 'idle';
    replace(verdictBox);
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const c = code.value.trim();
    if (c === '') {
      removeCoupon();
      explain('needs-code', 'Type a coupon code first: no coupon is applied.');
      return;
    }
    if (c !== applied) {
      watch(c);
      orderId = newOrderId(); // another code: another sale
    }
    applied = c;
    void validate();
  });
  clear.addEventListener('click', () => {
    code.value = '';
    removeCoupon();
  });
  // a coupon stays applied while the order changes: the till re-checks it (on change, not on every keystroke)
  for (const input of [amount, app, other]) input.addEventListener('change', () => void validate());
  subscription.add(() => watching?.unsubscribe());

  return {
    subscription,
    addLine(label, price) {
      lines.append(h('li', { testid: 'order-line' }, h('span', {}, label), h('b', {}, won(price))));
      // the amount becomes the sum of the lines (the cashier can still type over it)
      linesTotal += price;
      amount.value = String(linesTotal);
      amount.dispatchEvent(new Event('change'));
    },
  };
}
