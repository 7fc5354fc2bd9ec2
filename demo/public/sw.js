// The demo's service worker: keeps the app shell (the page, its modules, the shop-lookup worker and its modules)
// so a till that reloads without a network still starts and answers from IndexedDB. Hand-written, no library.
//   navigations      network first, the cached page when the network fails (also Vite's /@vite/* in dev)
//   versioned files  cache first (build assets under /assets/, Vite's pre-bundled deps with ?v=)
//   other same-origin GETs (dev modules)  stale-while-revalidate
//   /shop-api/*, /__mock/*, /__demo/*  never touched: lookups must see the real network, and say "offline" honestly
const CACHE = 'shop-lookup-demo-shell-v1';
const NEVER = [/^\/shop-api(\/|$)/, /^\/__mock(\/|$)/, /^\/__demo(\/|$)/, /^\/sw\.js$/];
const pending = new Set(); // cache writes under way, so "ready offline" is only said once they landed

self.addEventListener('install', (event) => {
  event.waitUntil(self.skipWaiting());
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
      await self.clients.claim(); // control the page that registered us, so its worker's modules are cached too
    })(),
  );
});

function isOurs(url) {
  return url.origin === self.location.origin && !NEVER.some((re) => re.test(url.pathname));
}

function isVersioned(url) {
  return url.pathname.startsWith('/assets/') || url.searchParams.has('v');
}

function remember(cache, request, response) {
  if (!response || !response.ok || response.type !== 'basic') return;
  const write = cache.put(request, response.clone()).catch(() => undefined);
  pending.add(write);
  write.finally(() => pending.delete(write));
}

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    remember(cache, request, response);
    return response;
  } catch (error) {
    const exact = await cache.match(request, { ignoreVary: true });
    if (exact) return exact;
    if (request.mode === 'navigate') {
      // any page of the app: the cached shell
      const shell =
        (await cache.match(request, { ignoreSearch: true, ignoreVary: true })) ??
        (await cache.match('/', { ignoreVary: true })) ??
        (await cache.match('/index.html', { ignoreVary: true }));
      if (shell) return shell;
    }
    throw error;
  }
}

async function cacheFirst(request) {
  const cache = await caches.open(CACHE);
  const cached = await cache.match(request, { ignoreVary: true });
  if (cached) return cached;
  const response = await fetch(request);
  remember(cache, request, response);
  return response;
}

async function staleWhileRevalidate(event) {
  const cache = await caches.open(CACHE);
  const cached = await cache.match(event.request, { ignoreVary: true });
  const network = fetch(event.request).then((response) => {
    remember(cache, event.request, response);
    return response;
  });
  if (!cached) return network;
  event.waitUntil(network.catch(() => undefined));
  return cached;
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (!isOurs(url)) return; // not answered here: the browser goes to the network as usual
  // the dev server's own client (/@vite/client) carries a per-start token: fresh when possible
  if (request.mode === 'navigate' || url.pathname.startsWith('/@vite/')) event.respondWith(networkFirst(request));
  else if (isVersioned(url)) event.respondWith(cacheFirst(request));
  else event.respondWith(staleWhileRevalidate(event));
});

// The page sends what it loaded before this worker controlled it (first visit); we fetch what is missing and
// answer once everything, including writes of responses we served, is in the cache.
self.addEventListener('message', (event) => {
  const data = event.data;
  if (!data || data.type !== 'warm' || !Array.isArray(data.urls)) return;
  const port = event.ports[0];
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      let cached = 0;
      for (const href of data.urls) {
        const url = new URL(href, self.location.origin);
        if (!isOurs(url)) continue;
        const key = url.pathname === '/index.html' ? '/' : url.href;
        if (await cache.match(key, { ignoreVary: true })) {
          cached++;
          continue;
        }
        try {
          const response = await fetch(url.href, { cache: 'no-cache' });
          if (response.ok) {
            await cache.put(key, response);
            cached++;
          }
        } catch {
          // offline right now: this one is cached when it is next fetched online
        }
      }
      await Promise.all([...pending]);
      port?.postMessage({ ok: true, cached, total: (await cache.keys()).length });
    })(),
  );
});
