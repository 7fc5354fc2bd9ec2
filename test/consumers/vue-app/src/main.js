// The app around the docs' Vue component (src/CouponField.vue, copied from docs/embedding.md by the test), plus what
// the test drives from Chromium: sync(), the number of lookup subscriptions open, and a switch that unmounts it.
import { Observable } from 'rxjs';
import { createShopLookup } from 'shop-lookup';
import { createApp, defineComponent, h, ref } from 'vue';
import CouponField from './CouponField.vue';

const lookup = createShopLookup({ baseUrl: '/shop-api', dbName: 'shop-lookup:vue-app' });

// Every Observable the component gets is counted while subscribed: what the composables leave open shows here.
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

const App = defineComponent(() => {
  const shown = ref(true);
  return () =>
    h('main', [
      h(
        'button',
        { type: 'button', id: 'toggle', onClick: () => (shown.value = !shown.value) },
        shown.value ? 'hide' : 'show',
      ),
      shown.value ? h('section', { id: 'widgets' }, [h(CouponField, { lookup: countedLookup })]) : null,
    ]);
});

createApp(App).mount('#app');
window.consumerTest = { sync: () => lookup.sync(), openSubscriptions: () => open };
