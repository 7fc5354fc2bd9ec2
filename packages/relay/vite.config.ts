// The build of @shop-lookup/relay (`npm run build` here, or the root's for every package): dist/index.js (the relay,
// the hub, the proxy) and dist/shop-lookup-relay.js (the command, package.json "bin"), unminified ESM for Node 20.
// Its dependencies stay imports by name; @shop-lookup/shop-api, a private workspace package, is bundled in.
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
      input: { index: 'src/index.ts', 'shop-lookup-relay': 'src/server/main.ts' },
      // the bin (package.json "bin") is run as a file: it starts with a shebang
      output: { format: 'es', entryFileNames: '[name].js', banner: (chunk) => (chunk.name === 'shop-lookup-relay' ? '#!/usr/bin/env node' : '') },
    },
  },
  ssr: { noExternal: ['@shop-lookup/shop-api'] },
});
