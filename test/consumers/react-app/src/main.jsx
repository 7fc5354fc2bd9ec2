// The app around the README's components (src/ShopWidgets.jsx, copied from README.md by the test) and the docs'
// Suspense card (src/CouponCard.jsx, from docs/embedding.md), plus what the test drives from Chromium: sync(), the
// number of lookup subscriptions open, and a switch that unmounts them.
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Observable } from 'rxjs';
import { createShopLookup } from 'shop-lookup';
import { CouponCard } from './CouponCard.jsx';
import { CouponField, OptionPicker, SyncBadge } from './ShopWidgets.jsx';

const lookup = createShopLookup({ baseUrl: '/shop-api', products: [13805], dbName: 'shop-lookup:react-app' });

// Every Observable the components get is counted while subscribed: what the hooks leave open shows here.
let open = 0;
const counted = (source) =>
  new Observable((subscriber) => {
    open++;
    const subscription = source.subscribe(subscriber);
    return () => {
      open--;
      subscription.unsubscribe();
    };
  });
const countedLookup = new Proxy(lookup, {
  get: (target, name) => {
    const value = target[name];
    if (typeof value !== 'function') return value;
    return (...args) => {
      const result = value(...args);
      return result instanceof Observable ? counted(result) : result;
    };
  },
});

function App() {
  const [shown, setShown] = useState(true);
  return (
    <main>
      <button type="button" id="toggle" onClick={() => setShown(!shown)}>
        {shown ? 'hide' : 'show'}
      </button>
      {shown && (
        <section id="widgets">
          <SyncBadge lookup={countedLookup} />
          <OptionPicker lookup={countedLookup} productNo={13805} />
          <CouponField lookup={countedLookup} />
          <CouponCard lookup={countedLookup} code="FIXED3000" />
        </section>
      )}
    </main>
  );
}

createRoot(document.getElementById('root')).render(<App />);
window.consumerTest = { sync: () => lookup.sync(), openSubscriptions: () => open };
