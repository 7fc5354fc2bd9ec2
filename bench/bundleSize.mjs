// What a consumer ships: an entry bundled with its dependencies by Vite (rolldown), minified by Vite's minifier
// (oxc), then gzipped. Built as a library and minified after: Vite leaves whitespace in ES library builds, and an
// app build would add its own preload helper, which belongs to the consumer's app, not to this package.
import { gzipSync } from 'node:zlib';
import { build, minify } from 'vite';

/**
 * Min+gzip bytes of what `entry` loads before it runs: its chunk and every chunk it imports statically (the
 * bundler may move shared code, dexie for one, into a chunk of its own). Chunks it loads with `import()` are
 * counted apart (`lazy`); a worker it starts is an asset of its own and measured on its own. `external`: packages
 * the consumer brings anyway (a peer dependency such as react), left out of the count.
 * @example await minGzipSize('/repo/packages/shop-lookup/src/react/index.ts', '/repo', { external: ['react'] })
 */
export async function minGzipSize(entry, root, { external = [] } = {}) {
  const out = await build({
    configFile: false,
    root,
    logLevel: 'silent',
    worker: { format: 'es' },
    build: {
      write: false,
      minify: false,
      target: 'es2022',
      sourcemap: false,
      lib: { entry, formats: ['es'], fileName: 'entry' },
      rollupOptions: {
        external: (id) => external.some((d) => id === d || id.startsWith(`${d}/`)),
        // chunks named without a content hash: the entry names the chunks it loads, and a hash would move its
        // gzip size by a byte or two with every change to any other chunk (the app's bundler names them its way)
        output: { chunkFileNames: '[name].js' },
      },
    },
  });
  const chunks = (Array.isArray(out) ? out : [out]).flatMap((o) => o.output ?? []).filter((o) => o.type === 'chunk');
  const byFile = new Map(chunks.map((c) => [c.fileName, c]));
  const main = chunks.find((c) => c.isEntry);
  if (!main) throw new Error(`no entry chunk for ${entry}`);
  const initial = new Set();
  const visit = (c) => {
    if (initial.has(c.fileName)) return;
    initial.add(c.fileName);
    for (const f of c.imports) if (byFile.has(f)) visit(byFile.get(f));
  };
  visit(main);
  const sized = await Promise.all(
    chunks.map(async (c) => {
      const { code } = await minify(c.fileName, c.code, {
        module: true,
        compress: { target: 'es2022' },
        mangle: { toplevel: true },
      });
      return {
        file: c.fileName,
        initial: initial.has(c.fileName),
        raw: Buffer.byteLength(code),
        gzip: gzipSync(code, { level: 9 }).length,
        modules: moduleSizes(c),
      };
    }),
  );
  const sum = (list, k) => list.reduce((a, c) => a + c[k], 0);
  const first = sized.filter((c) => c.initial);
  return {
    raw: sum(first, 'raw'),
    gzip: sum(first, 'gzip'),
    chunks: first.map(({ file, gzip, modules }) => ({ file, gzip, modules })),
    lazy: sized.filter((c) => !c.initial).map(({ file, gzip }) => ({ file, gzip })),
  };
}

/** Bytes per package or source file in a chunk (before minification), largest first: where the size comes from. */
function moduleSizes(chunk) {
  const by = {};
  for (const [id, m] of Object.entries(chunk.modules)) {
    const key = id.includes('node_modules/')
      ? id.split('node_modules/')[1].split('/')[0]
      : id.split('/').slice(-2).join('/');
    by[key] = (by[key] ?? 0) + m.renderedLength;
  }
  return Object.fromEntries(
    Object.entries(by)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12),
  );
}
