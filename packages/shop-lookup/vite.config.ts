// The build of shop-lookup, the browser package (`npm run build` here, or the root's for every package; vitest's
// config is the root's vitest.config.ts, the demo's demo/vite.config.ts).
//   vite build → dist/: index.js (src/index.ts), worker.js (worker/worker.ts), react.js (the hooks, src/react/),
//                vue.js (the composables, src/vue/), devtools.js and devtools-react.js (the devtools' entries; their
//                panel a chunk of its own), unminified ESM with bare imports of dexie/comlink/rxjs/zod/react/vue, so
//                the app's bundler bundles the worker itself and the main entry never carries the hooks
import { posix } from 'node:path';
import MagicString from 'magic-string';
import { defineConfig, type Plugin } from 'vite';

const browserDeps = ['dexie', 'comlink', 'rxjs', 'zod', 'fake-indexeddb'];
// optional peer dependencies: the app's own copy, never bundled
const peerDeps = ['react', 'vue'];

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

export default defineConfig({
  build: {
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
  plugins: [literalWorkerUrl('worker.js')],
  optimizeDeps: { include: browserDeps },
});
