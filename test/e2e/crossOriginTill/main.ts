// A till page served from its own origin, its relay on another (test/e2e/crossOrigin.test.ts): the relay's URL and the
// till's token come from this origin's localStorage (what a sign-in would keep there), and the page, built with
// vite-plugin-pwa as docs/embedding.md's "Reload offline" says, opens with no network at all. The test drives it
// through window.till; the status line shows the engine's state.
import { createShopLookup, type ShopLookup, type SyncStatus } from 'shop-lookup';

declare global {
  interface Window {
    till: {
      open(): void;
      sync(): ReturnType<ShopLookup['sync']>;
      status(): Promise<SyncStatus>;
      validate(code: string, amount: number): ReturnType<ShopLookup['validateCoupon']>;
    };
  }
}

// the app shell's service worker (vite-plugin-pwa's sw.js: this page's files, never the relay's answers)
void navigator.serviceWorker?.register('/sw.js', { type: 'classic' });

let lookup: ShopLookup | null = null;
let last: SyncStatus | null = null;
const started = (): ShopLookup => {
  if (!lookup) throw new Error('open() the till first');
  return lookup;
};

window.till = {
  open() {
    lookup ??= createShopLookup({
      baseUrl: localStorage.getItem('relay') ?? '',
      // asked at the first request and again after a 401: a till signed in again has a new one here
      token: () => localStorage.getItem('till-token') ?? '',
      dbName: 'shop-lookup:cross-origin-till',
    });
    lookup.status().subscribe((s) => {
      last = s;
      document.querySelector('[data-testid="status"]')!.textContent = s.online
        ? `${s.phase}${s.lastError ? `: ${s.lastError.code}` : ''}`
        : 'offline';
    });
  },
  sync: () => started().sync(),
  async status() {
    started();
    while (!last) await new Promise((r) => setTimeout(r, 20));
    return last;
  },
  validate: (code, amount) => started().validateCoupon(code, { amount }),
};
