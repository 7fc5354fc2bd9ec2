// The demo POS page: a till that embeds shop-lookup through its public API only, against /shop-api (the
// credential proxy of the demo server), with the default module worker.
import { take } from 'rxjs';
import { createShopLookup } from 'shop-lookup';
import { mountApiSwitch } from './apiSwitch';
import { mountCheckout } from './checkout';
import { startClock } from './clock';
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

// The service worker first: the shop-lookup worker's modules must be fetched through it to be kept offline.
const shell = await startOfflineShell(byTestId(page, 'offline-ready'));

const lookup = createShopLookup({ baseUrl: '/shop-api', products: config.products.map((p) => p.no) });

mountStatusBar(byTestId(page, 'status'), lookup);
mountApiSwitch(byTestId(page, 'api-switch-box'), lookup);
const journal = mountJournal(byTestId(page, 'journal'), lookup);
const checkout = mountCheckout(byTestId(page, 'checkout'), lookup, { onVerdict: () => void journal.refresh() });
mountProducts(byTestId(page, 'products'), lookup, config.products, checkout.addLine);
mountCouponList(byTestId(page, 'coupons'), lookup, (code) => {
  const field = byTestId<HTMLInputElement>(page, 'coupon-code');
  field.value = code;
  field.focus();
});
void journal.refresh();
startClock();

// Once the engine answered, every module of the page and of the worker has been loaded: keep them offline.
lookup.status().pipe(take(1)).subscribe(() => void shell.warm());

/** For the browser console: `shopLookup.sync()`, `shopLookup.coupon('WELCOME10').subscribe(console.log)`. */
(globalThis as { shopLookup?: unknown }).shopLookup = lookup;
