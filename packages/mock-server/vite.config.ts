// The build of @shop-lookup/mock-server (`npm run build` here, or the root's for every package): dist/index.js (the
// mock API), dist/msw.js (its MSW handlers; msw, an optional peer, stays an import by name) and
// dist/shop-lookup-mock.js (the command, package.json "bin"), ESM for Node 20.
import { defineConfig } from 'vite';

export default defineConfig({
  build: {
    ssr: true,
    outDir: 'dist',
    emptyOutDir: true,
    // no source maps in the package: the output is unminified ESM that reads like its source
    sourcemap: false,
    target: 'node20',
    rollupOptions: {
      input: { index: 'src/index.ts', msw: 'src/msw/index.ts', 'shop-lookup-mock': 'src/mockCommand.ts' },
      external: (id: string) => id === 'msw' || id.startsWith('msw/'),
      // the bin (package.json "bin") is run as a file: it starts with a shebang
      output: {
        format: 'es',
        entryFileNames: '[name].js',
        banner: (chunk) => (chunk.name === 'shop-lookup-mock' ? '#!/usr/bin/env node' : ''),
      },
    },
  },
});
