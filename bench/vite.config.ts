// The benchmark page (`npm run bench`): bench/index.html + its worker, built to bench-results/site and served by
// `vite preview` with cross-origin isolation (COOP/COEP), so performance.now() has fine resolution. The runner
// (bench/run.mjs) mounts the mock shop API on the same server (same origin: no CORS preflights, as behind a proxy).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  // the page stays in the browser's memory cache between "reloads", as a real app's chunks do
  'Cache-Control': 'max-age=3600',
};

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  cacheDir: fileURLToPath(new URL('../node_modules/.vite/bench', import.meta.url)),
  publicDir: false,
  logLevel: 'warn',
  worker: { format: 'es' as const },
  build: {
    outDir: fileURLToPath(new URL('../bench-results/site', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // BENCH_MINIFY=0 keeps names readable in CPU profiles (bench/profile.mjs)
    minify: process.env.BENCH_MINIFY !== '0',
    sourcemap: false,
    modulePreload: false,
  },
  preview: { host: '127.0.0.1', port: 0, strictPort: false, headers: isolation },
});
