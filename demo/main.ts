// The demo POS page: a till that embeds shop-lookup through its public API only, against /shop-api (the
// credential proxy of the demo server), with the default module worker.
import { createShopLookup } from 'shop-lookup';
import { mountDevtools } from 'shop-lookup/devtools';
import { mountApiSwitch } from './apiSwitch';
import { mountCheckout } from './checkout';
import { startClock } from './clock';
import { mountCodesToTry } from './codesToTry';
import { mountCouponList } from './couponList';
import { byTestId } from './dom';
import { mountJournal } from './journal';
import { startOfflineShell } from './offline';
import { mountProducts } from './products';
import { mountStatusBar } from './statusBar';
import './style.css';

const config = __SHOP_DEMO__;
const page = document.body;

byTestId(page, 'api-label').textContent = config.mode === 'mock' ? 'demo shop (mock API)' : config.apiLabel;
byTestId(page, 'app-build').textContent = __DEMO_BUILD__ === null ? 'dev server' : `build ${__DEMO_BUILD__}`;

// The app shell first: a new build downloaded earlier is taken before the till starts (the page reloads into it).
if (await startOfflineShell(byTestId(page, 'offline-ready'), byTestId<HTMLButtonElement>(page, 'app-update')))
  startTill();

function startTill(): void {
  // `?till=2`: another till of the shop (a database of its own, named on the relay by its token): open /?till=1 and
  // /?till=2 in two windows, and a voucher accepted at one is refused at the other
  const till = new URLSearchParams(location.search).get('till');
  const name = till && /^\w{1,20}$/.test(till) ? `till-${till}` : null;
  if (name) byTestId(page, 'api-label').textContent += ` · ${name}`;
  const lookup = createShopLookup({
    baseUrl: '/shop-api',
    products: config.products.map((p) => p.no),
    ...(name ? { dbName: `shop-lookup:${name}`, token: name } : {}),
  });

  mountStatusBar(byTestId(page, 'status'), lookup);
  mountApiSwitch(byTestId(page, 'api-switch-box'), lookup);
  const journal = mountJournal(byTestId(page, 'journal'), lookup);
  const checkout = mountCheckout(byTestId(page, 'checkout'), lookup, { onVerdict: () => void journal.refresh() });
  mountProducts(byTestId(page, 'products'), lookup, config.products, checkout.addLine);
  const pickCode = (code: string) => {
    const field = byTestId<HTMLInputElement>(page, 'coupon-code');
    field.value = code;
    field.focus();
  };
  mountCodesToTry(byTestId(page, 'codes-to-try'), config.codes, pickCode);
  mountCouponList(byTestId(page, 'coupons'), lookup, pickCode);
  void journal.refresh();
  startClock();
  // `?devtools`: shop-lookup's devtools, a toggle in the corner (in the built demo too: a demo shows its tools)
  if (new URLSearchParams(location.search).has('devtools')) mountDevtools(lookup, null, { production: true });

  /** For the browser console: `shopLookup.sync()`, `shopLookup.coupon('WELCOME10').subscribe(console.log)`. */
  (globalThis as { shopLookup?: unknown }).shopLookup = lookup;
}
