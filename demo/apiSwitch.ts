// "Cut the API": asks the demo server to stop forwarding /shop-api (the proxy's upstream goes down), then asks
// shop-lookup to sync, so it notices at once instead of at its next request. The browser itself stays online.
import type { ShopLookup } from 'shop-lookup';
import { h, replace } from './dom';

const ENDPOINT = '/__demo/api';

/** @example mountApiSwitch(el, lookup); */
export function mountApiSwitch(root: HTMLElement, lookup: ShopLookup): void {
  const box = h('input', { testid: 'api-switch', attrs: { type: 'checkbox', role: 'switch' } });
  const state = h('span', { class: 'switch-state', testid: 'api-switch-state' }, '');
  replace(
    root,
    h(
      'label',
      { class: 'switch', attrs: { title: 'Simulate losing the shop API (the network stays up)' } },
      box,
      h('span', { class: 'track' }),
      h('span', {}, 'Cut the API'),
    ),
    state,
  );

  const show = (down: boolean) => {
    box.checked = down;
    root.dataset.down = String(down);
    state.textContent = down ? 'API cut' : '';
  };
  fetch(ENDPOINT, { cache: 'no-store' })
    .then((r) => r.json() as Promise<{ down: boolean }>)
    .then((s) => show(s.down))
    .catch(() => undefined); // offline: the switch simply shows its last position

  box.addEventListener('change', async () => {
    const down = box.checked;
    box.disabled = true;
    try {
      const res = await fetch(ENDPOINT, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ down }),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      show(((await res.json()) as { down: boolean }).down);
      void lookup.sync(); // let shop-lookup find out now, both ways
    } catch (error) {
      show(!down);
      state.textContent = `The demo server could not be reached (${(error as Error).message}).`;
    } finally {
      box.disabled = false;
    }
  });
}
