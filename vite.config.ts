// One config for the library build and vitest (the demo has its own: demo/vite.config.ts).
//   vite build             → dist/: index.js (src/index.ts), worker.js (worker/worker.ts), react.js (the hooks,
//                            src/react/), vue.js (the composables, src/vue/), devtools.js and devtools-react.js (the
//                            devtools' entries; their panel a chunk of its own), unminified ESM with bare imports of
//                            dexie/comlink/rxjs/zod/react/vue, so the app's bundler bundles the worker itself and the
//                            main entry never carries the hooks
//   vite build --mode node → dist/node/: shop-lookup/relay, /proxy, /mock-server and /mock-server/msw, deprecated
//                            entries (moved/) that load @shop-lookup/relay and @shop-lookup/mock-server when installed
// The server packages build themselves (packages/*/vite.config.ts); the root's `npm run build` builds them all.
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import MagicString from 'magic-string';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

// under the mock's real rate limits, run alone (see test.projects): the relay as processes, the proxy and the
// engine's own limiter
const PROCESS_TESTS = [
  'test/relayScale.test.ts',
  'test/relayHubScale.test.ts',
  'test/relayUsesProcesses.test.ts',
  'test/proxy.test.ts',
  'test/rateLimiter.test.ts',
];

// what packs, installs or benchmarks: the packed tarballs in users' apps, the smoke bench
const PACKED_TESTS = ['test/consumers/**/*.test.ts', 'test/bench.test.ts'];

const browserDeps = ['dexie', 'comlink', 'rxjs', 'zod', 'fake-indexeddb'];
// optional peer dependencies: the app's own copy, never bundled
const peerDeps = ['react', 'vue'];
// where shop-lookup's server entries moved (moved/): loaded when installed, never a dependency
const movedTo = ['@shop-lookup/relay', '@shop-lookup/mock-server'];

const WORKER_SOURCE_URL = /new URL\((['"])\.\.\/worker\/worker\.ts\1, import\.meta\.url\)/g;
const WORKER_PLACEHOLDER_TEXT = '__SHOP_LOOKUP_WORKER_URL__';
const WORKER_PLACEHOLDER = /__SHOP_LOOKUP_WORKER_URL__/g;

/**
 * Keeps `new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })` literal in dist/index.js, pointing
 * at the shipped dist/worker.js entry: the one pattern Vite, webpack 5, Rspack and Parcel all recognise, so the
 * app's bundler bundles the worker (and dedupes its deps). Vite's own worker plugin would otherwise pre-bundle the
 * worker into an asset and rewrite the URL into a form other bundlers cannot follow. Source stays
 * `new URL('../worker/worker.ts', import.meta.url)`, which the dev server, the demo and the e2e tests load as is.
 */
function literalWorkerUrl(workerFile: string): Plugin {
  let replaced = 0;
  return {
    name: 'shop-lookup:literal-worker-url',
    apply: 'build',
    enforce: 'pre',
    transform(code, id) {
      if (!id.endsWith('/src/connectEngine.ts')) return null;
      const out = new MagicString(code);
      for (const m of code.matchAll(WORKER_SOURCE_URL)) {
        out.overwrite(m.index, m.index + m[0].length, WORKER_PLACEHOLDER_TEXT);
        replaced++;
      }
      return out.hasChanged()
        ? { code: out.toString(), map: out.generateMap({ hires: true, source: id, includeContent: true }) }
        : null;
    },
    renderChunk(code, chunk) {
      if (!WORKER_PLACEHOLDER.test(code)) return null;
      const rel = posix.relative(posix.dirname(chunk.fileName), workerFile);
      const url = `new URL(${JSON.stringify(rel.startsWith('.') ? rel : `./${rel}`)}, import.meta.url)`;
      return { code: code.replace(WORKER_PLACEHOLDER, url), map: null };
    },
    buildEnd(error) {
      if (!error && replaced === 0)
        this.error("src/connectEngine.ts no longer has new URL('../worker/worker.ts', import.meta.url)");
    },
  };
}

export default defineConfig(({ mode }) => ({
  build:
    mode === 'node'
      ? {
          ssr: true,
          outDir: 'dist/node',
          emptyOutDir: true,
          // no source maps in the package: the output is unminified ESM that reads like its source, and maps of the
          // TypeScript sources would be 60 % of the tarball (docs/embedding.md, "Install")
          sourcemap: false,
          target: 'node20',
          rollupOptions: {
            input: {
              'mock-server': 'moved/mockServer.ts',
              'mock-server-msw': 'moved/mockServerMsw.ts',
              proxy: 'moved/proxy.ts',
              relay: 'moved/relay.ts',
            },
            // the packages the entries moved to: installed beside shop-lookup, never bundled into it
            external: (id: string) => movedTo.some((d) => id === d || id.startsWith(`${d}/`)),
            output: { format: 'es', entryFileNames: '[name].js' },
          },
        }
      : {
          outDir: 'dist',
          emptyOutDir: true,
          // no source maps in the package: the output is unminified ESM that reads like its source, and maps of the
          // TypeScript sources would be 60 % of the tarball (docs/embedding.md, "Install")
          sourcemap: false,
          target: 'es2022',
          // a library: the app's bundler minifies; readable output is easier to debug and to audit
          minify: false,
          lib: {
            entry: {
              index: 'src/index.ts',
              worker: 'worker/worker.ts',
              react: 'src/react/index.ts',
              vue: 'src/vue/index.ts',
              devtools: 'src/devtools/index.ts',
              'devtools-react': 'src/devtools/react.ts',
            },
            formats: ['es'],
          },
          rollupOptions: {
            external: (id: string) => [...browserDeps, ...peerDeps].some((d) => id === d || id.startsWith(`${d}/`)),
            output: {
              entryFileNames: '[name].js',
              chunkFileNames: '[name]-[hash].js',
              // dexie's `import` entry is a wrapper around its UMD build: bundlers cope, but Vite's dev server serves
              // the worker's imports unbundled, and the browser cannot import UMD. Its ESM build works everywhere.
              paths: { dexie: 'dexie/dist/dexie.mjs' },
            },
          },
        },
  plugins: mode === 'node' ? [] : [literalWorkerUrl('worker.js')],
  optimizeDeps: { include: browserDeps },
  test: {
    environment: 'node',
    // the packages by name, as their sources (their package.json "exports" name the built dist/)
    alias: [
      {
        find: /^@shop-lookup\/relay$/,
        replacement: fileURLToPath(new URL('./packages/relay/src/index.ts', import.meta.url)),
      },
      {
        find: /^@shop-lookup\/mock-server$/,
        replacement: fileURLToPath(new URL('./packages/mock-server/src/index.ts', import.meta.url)),
      },
      {
        find: /^@shop-lookup\/mock-server\/msw$/,
        replacement: fileURLToPath(new URL('./packages/mock-server/src/msw/index.ts', import.meta.url)),
      },
    ],
    testTimeout: 20_000,
    // expect.poll waits up to 10 s (default 1 s): the two lanes share 2 cores (how fast is the bench's to say)
    expect: { poll: { timeout: 10_000 } },
    // Lanes (scripts/test-lanes.mjs runs them side by side, each one file at a time): the browser tests, the
    // packed package in users' apps (with the smoke bench), and everything else; then, alone on the machine, the
    // relay's process tests, whose upstream rate limits are real (a relay process starved of CPU by a browser sends
    // its request late and meets a 429 it never earned). `vitest run` alone runs all four, one after the other.
    projects: [
      { extends: true, test: { name: 'browsers', include: ['test/e2e/**/*.test.ts'], fileParallelism: false } },
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', ...PROCESS_TESTS, ...PACKED_TESTS, '**/node_modules/**'],
          fileParallelism: false,
        },
      },
      { extends: true, test: { name: 'packed', include: PACKED_TESTS, fileParallelism: false } },
      { extends: true, test: { name: 'processes', include: PROCESS_TESTS, fileParallelism: false } },
    ],
  },
}));
