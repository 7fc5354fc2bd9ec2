// The demo storefront: a product page (option picker, coupon field) for anonymous shoppers, on a relay of its own
// (/storefront-api, the storefront authorize): it keeps coupons by code and never receives the coupon list.
import { createShopLookup } from 'shop-lookup';
import { byTestId } from './dom';
import { startOfflineShell } from './offline';
import './style.css';

const config = __SHOP_DEMO__;
const product = config.products.find((p) => p.no === 13805) ?? config.products[0] ?? { no: 13805, name: '상품', price: 10_000 };
const page = document.body;

// The app shell first: a new build downloaded earlier is taken before the page starts (it reloads into it).
if (await startOfflineShell(byTestId(page, 'offline-ready'))) startStorefront();

function startStorefront(): void {
  const lookup = createShopLookup({ baseUrl: '/storefront-api', products: [product.no], dbName: 'shop-lookup:demo-storefront', coupons: 'byCode' });

  byTestId(page, 'product-name').textContent = `${product.name} · ₩${product.price.toLocaleString('ko-KR')}`;

  const status = byTestId(page, 'storefront-status');
  lookup.status().subscribe((s) => {
    status.textContent = s.online ? s.phase : 'offline: answering from this device';
    status.dataset.phase = s.phase;
    status.dataset.online = String(s.online);
  });

  const picker = byTestId<HTMLSelectElement>(page, 'options');
  lookup.productOptions(product.no).subscribe(({ data, syncedAt }) => {
    picker.replaceChildren(...data.map((o) => new Option(o.name ?? o.code ?? `#${o.no}`, String(o.no))));
    if (syncedAt !== null) picker.dataset.syncedAt = String(syncedAt);
  });

  const verdict = byTestId<HTMLOutputElement>(page, 'verdict');
  byTestId<HTMLFormElement>(page, 'coupon-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const code = byTestId<HTMLInputElement>(page, 'coupon-code').value.trim();
    if (!code) return;
    verdict.dataset.state = 'checking';
    void lookup.validateCoupon(code, { amount: product.price }).then(
      (v) => {
        verdict.textContent = v.ok ? `₩${(product.price - v.discount).toLocaleString('ko-KR')} (−₩${v.discount.toLocaleString('ko-KR')})` : v.detail.message;
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
