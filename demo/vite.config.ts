// The demo POS page: `npm run demo` (built, then served by `vite preview`: scripts/demo.mjs), `npm run demo:dev` (the
// dev server), `npm run demo:build` + `npm run demo:preview`.
// The page imports shop-lookup the way an embedding app would ('shop-lookup' → this repo's
// packages/shop-lookup/src/index.ts) and talks to the shop API only through the credential proxy that shopApiDemo()
// mounts at /shop-api.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { demoSettingsFromEnv, shopApiDemo } from './devServer';

const demoRoot = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * The offline app shell (docs/offline.md): a Workbox service worker, sw.js, precaching every file of the build (both
 * pages, their modules and the shop-lookup worker's chunks) and nothing else. No runtime caching and no navigation
 * fallback: /shop-api, /storefront-api, /__mock and /__demo are never in its cache, so a lookup offline says so.
 * The page registers it and takes a new build as demo/offline.ts says (no script injected; 'prompt': a new build
 * waits until the page asks it to take over). The dev server has none (vite-plugin-pwa's default).
 */
const offlineShell = () =>
  VitePWA({
    injectRegister: false,
    registerType: 'prompt',
    manifest: false,
    workbox: {
      globPatterns: ['**/*.{js,css,html}'],
      navigateFallback: null,
      cleanupOutdatedCaches: true,
      // the page that installed it is controlled at once: a new build then waits behind it (a browser may let a new
      // build take over at once when no page is controlled, and the page would reload under the cashier)
      clientsClaim: true,
    },
  });

export default defineConfig(({ command }) => {
  const settings = demoSettingsFromEnv(process.env);
  return {
    root: demoRoot,
    base: '/',
    // own cache, so the demo never fights the library's dev server or vitest over node_modules/.vite
    cacheDir: fileURLToPath(new URL('../node_modules/.vite/demo', import.meta.url)),
    publicDir: false,
    resolve: {
      alias: [
        {
          find: /^shop-lookup$/,
          replacement: fileURLToPath(new URL('../packages/shop-lookup/src/index.ts', import.meta.url)),
        },
        {
          find: /^shop-lookup\/devtools$/,
          replacement: fileURLToPath(new URL('../packages/shop-lookup/src/devtools/index.ts', import.meta.url)),
        },
      ],
    },
    define: {
      // what the page needs to know about this server: which API it talks to, which products it tracks
      __SHOP_DEMO__: JSON.stringify(settings.page),
      // which build the till runs, shown in its header (a new build reaches a till as docs/offline.md says); null on
      // the dev server, which keeps no offline shell (import.meta.env.DEV is no sign: vitest's builds are DEV too)
      __DEMO_BUILD__: JSON.stringify(
        command === 'build' ? new Date().toISOString().slice(0, 16).replace('T', ' ') : null,
      ),
    },
    // the worker's dependencies are only found when the worker loads: list them, or the dev server
    // re-optimises on first load and reloads the page mid-sync
    optimizeDeps: { include: ['dexie', 'comlink', 'rxjs', 'zod', 'zod/mini'] },
    server: {
      port: 5173,
      fs: { allow: [repoRoot] },
    },
    // the built till where the dev server would be: the README's http://localhost:5173
    preview: { port: 5173 },
    worker: { format: 'es' as const },
    build: {
      outDir: 'dist',
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: true,
      // two pages: the till (index.html) and the storefront (storefront.html)
      rolldownOptions: { input: { main: `${demoRoot}index.html`, storefront: `${demoRoot}storefront.html` } },
    },
    plugins: [shopApiDemo(settings), offlineShell()],
  };
});
