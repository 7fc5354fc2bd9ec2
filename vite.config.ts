// One config for the library build, the demo's dev server and vitest.
//   vite build             → dist/: the browser entry (src/index.ts) with the worker as its own chunk
//   vite build --mode node → dist/node/: the Node-only entries (mock server, credential proxy)
import { defineConfig } from 'vitest/config';

const browserDeps = ['dexie', 'comlink', 'rxjs', 'zod'];

export default defineConfig(({ mode }) => ({
  // relative URLs, so the worker chunk is found next to the entry wherever the package is served from
  base: './',
  build:
    mode === 'node'
      ? {
          ssr: true,
          outDir: 'dist/node',
          emptyOutDir: true,
          sourcemap: true,
          target: 'node20',
          rollupOptions: {
            input: { 'mock-server': 'mock-server/index.ts', proxy: 'proxy/index.ts' },
            output: { format: 'es', entryFileNames: '[name].js' },
          },
        }
      : {
          outDir: 'dist',
          emptyOutDir: true,
          sourcemap: true,
          target: 'es2022',
          lib: { entry: { index: 'src/index.ts', worker: 'worker/worker.ts' }, formats: ['es'] },
          rollupOptions: { external: (id: string) => browserDeps.some((d) => id === d || id.startsWith(`${d}/`)) },
        },
  worker: {
    format: 'es' as const,
    rollupOptions: { output: { entryFileNames: 'assets/[name]-[hash].js' } },
  },
  optimizeDeps: { include: browserDeps },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 20_000,
  },
}));
