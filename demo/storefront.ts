// The demo storefront: a product page (option picker, coupon field) for anonymous shoppers, on a relay of its own
// (/storefront-api, the storefront authorize): it keeps coupons by code and never receives the coupon list.
import { createShopLookup, type ProductOption, type SyncStatus } from 'shop-lookup';
import { byTestId, h } from './dom';
import { startOfflineShell } from './offline';
import './style.css';

const config = __SHOP_DEMO__;
const product = config.products.find((p) => p.no === 13805) ??
  config.products[0] ?? { no: 13805, name: '상품', price: 10_000 };
const page = document.body;

/** What a shopper reads about the data (never the engine's phase names). */
function statusWords(s: SyncStatus): string {
  if (!s.online) return 'Offline: prices and coupons from this device';
  if (s.phase === 'syncing' || s.phase === 'waiting') return 'Updating…';
  if (s.phase === 'error') return 'Could not update: prices and coupons from this device';
  return s.lastSyncedAt.options === null ? 'Starting…' : 'Up to date';
}

/** One option: a picker of its values, or a text field for an option the shopper types. */
function optionField(o: ProductOption): HTMLElement {
  const name = o.name ?? o.code ?? `#${o.no}`;
  const control =
    o.value_list.length > 0
      ? h(
          'select',
          { testid: `option-${o.no}`, attrs: { name: `option-${o.no}` } },
          o.value_list.map((v) => h('option', { attrs: { value: v.code } }, v.name ?? v.code)),
        )
      : h('input', { testid: `option-${o.no}`, attrs: { type: 'text', name: `option-${o.no}`, autocomplete: 'off' } });
  return h('label', { class: 'field' }, h('span', {}, name), control);
}

// The app shell first: a new build downloaded earlier is taken before the page starts (it reloads into it).
if (await startOfflineShell(byTestId(page, 'offline-ready'))) startStorefront();

function startStorefront(): void {
  const lookup = createShopLookup({
    baseUrl: '/storefront-api',
    products: [product.no],
    dbName: 'shop-lookup:demo-storefront',
    coupons: 'byCode',
  });

  byTestId(page, 'product-name').textContent = `${product.name} · ₩${product.price.toLocaleString('ko-KR')}`;

  const status = byTestId(page, 'storefront-status');
  lookup.status().subscribe((s) => {
    status.textContent = statusWords(s);
    status.dataset.phase = s.phase;
    status.dataset.online = String(s.online);
  });

  const options = byTestId(page, 'options');
  lookup.productOptions(product.no).subscribe(({ data, syncedAt }) => {
    options.replaceChildren(...data.map(optionField));
    if (syncedAt !== null) options.dataset.syncedAt = String(syncedAt);
  });

  const verdict = byTestId<HTMLOutputElement>(page, 'verdict');
  byTestId<HTMLFormElement>(page, 'coupon-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const code = byTestId<HTMLInputElement>(page, 'coupon-code').value.trim();
    if (!code) return;
    verdict.dataset.state = 'checking';
    void lookup.validateCoupon(code, { amount: product.price }).then(
      (v) => {
        verdict.textContent = v.ok
          ? `₩${(product.price - v.discount).toLocaleString('ko-KR')} (−₩${v.discount.toLocaleString('ko-KR')})`
          : v.detail.message;
        verdict.dataset.state = v.ok ? 'ok' : 'rejected';
        verdict.dataset.source = v.source;
      },
      (e: { message?: string }) => {
        verdict.textContent = e.message ?? String(e);
        verdict.dataset.state = 'error';
      },
    );
  });

  /** For the browser console and tests. */
  (globalThis as { shopLookup?: unknown }).shopLookup = lookup;
}
