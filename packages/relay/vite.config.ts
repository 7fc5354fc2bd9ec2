// The build of @shop-lookup/relay (`npm run build` here, or the root's for every package): dist/index.js (the relay,
// the hub, the proxy) and dist/shop-lookup-relay.js (the command, package.json "bin"), unminified ESM for Node 20.
// Its dependencies stay imports by name; @shop-lookup/shop-api, a private workspace package, is bundled in. The
// server's pages of the repository's docs/ ship in dist/docs/, where the command's --help points.
import { readFileSync } from 'node:fs';
import { defineConfig, type Plugin } from 'vite';

/** Where the repository's files are read online (package.json "repository"). */
const REPOSITORY = 'https://github.com/shop-lookup/shop-lookup/blob/main/';
/** The pages an operator of the relay reads; a link to any other page leads to the repository. */
const SHIPPED_DOCS = ['relay.md', 'hub.md', 'proxy.md', 'feed-protocol.md', 'errors.md', 'security.md', 'faults.md'];

/** docs/<page> as dist/docs/<page>, its links to pages not shipped made absolute. */
function shipDocs(): Plugin {
  return {
    name: 'ship-relay-docs',
    generateBundle() {
      for (const page of SHIPPED_DOCS) {
        const text = readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8').replace(
          /\]\((\.\.\/)?([\w./-]+\.md)(#[^)]*)?\)/g,
          (link, up: string | undefined, file: string, hash = '') =>
            !up && SHIPPED_DOCS.includes(file) ? link : `](${REPOSITORY}${up ? '' : 'docs/'}${file}${hash})`,
        );
        this.emitFile({ type: 'asset', fileName: `docs/${page}`, source: text });
      }
    },
  };
}

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
      output: {
        format: 'es',
        entryFileNames: '[name].js',
        banner: (chunk) => (chunk.name === 'shop-lookup-relay' ? '#!/usr/bin/env node' : ''),
      },
    },
  },
  ssr: { noExternal: ['@shop-lookup/shop-api'] },
  plugins: [shipDocs()],
});
