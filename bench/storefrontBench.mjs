// A storefront's figures (issue 18 "Measured"), on loopback with engines in Node (`worker: false`, fake-indexeddb):
// a storefront's first visit on a relay (bytes, and time to its first productOptions answer) against a till's full
// sync of the same relay and a single product read; and 1,000 concurrent anonymous reads of one untracked product
// through one relay (upstream calls). Measured in a child process (storefrontChild.mjs) on the package as built
// (shop-lookup's browser build, @shop-lookup/relay's and @shop-lookup/mock-server's, into
// node_modules/.cache/shop-lookup-bench/), in plain Node: under a TypeScript loader
// every import() of the engine's lazy chunks went through the loader's hooks thread, about a millisecond each,
// which no app pays. Run with `npm run bench -- --only storefront`, or alone: `node bench/storefrontBench.mjs
// [--smoke]`.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'vite';

/** Builds the packages (shop-lookup's browser entries, the relay, the mock API) where the child imports them from. */
async function buildPackage(root) {
  const out = `${root}node_modules/.cache/shop-lookup-bench/`;
  const quiet = { logLevel: 'warn' };
  await build({
    ...quiet,
    root: `${root}packages/shop-lookup`,
    configFile: `${root}packages/shop-lookup/vite.config.ts`,
    build: { outDir: `${out}web`, emptyOutDir: true },
  });
  for (const name of ['relay', 'mock-server']) {
    const dir = `${root}packages/${name}`;
    await build({
      ...quiet,
      root: dir,
      configFile: `${dir}/vite.config.ts`,
      build: { outDir: `${out}${name}`, emptyOutDir: true },
    });
  }
  return out;
}

/**
 * @example await benchStorefront({ root, sizes, log, row, results, smoke });
 */
export async function benchStorefront({ root, sizes, log, row, results, smoke }) {
  log(
    `storefront: first visit on a relay (${sizes.big} coupons, 20 tracked products) vs a till's full sync; ${smoke ? 100 : 1000} anonymous reads of one untracked product`,
  );
  const built = await buildPackage(root);
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [
      `${root}bench/storefrontChild.mjs`,
      JSON.stringify({ sizes: { big: sizes.big, small: sizes.small, runs: sizes.runs }, smoke, built }),
    ],
    { cwd: root, maxBuffer: 64 * 1024 * 1024, timeout: 900_000 },
  );
  for (const line of stderr.split('\n').filter((l) => l.startsWith('  '))) log(line);
  const { rows, scenario } = JSON.parse(stdout.trim().split('\n').at(-1));
  results.scenarios.storefront = scenario;
  for (const r of rows) row(r);
}

// alone: node bench/storefrontBench.mjs [--smoke]
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const smoke = process.argv.includes('--smoke');
  const sizes = smoke ? { big: 1_000, small: 100, runs: 1 } : { big: 100_000, small: 1_000, runs: 3 };
  const rows = [];
  const root = fileURLToPath(new URL('..', import.meta.url));
  await benchStorefront({
    root,
    sizes,
    log: (m) => console.log(m),
    row: (r) => rows.push(r),
    results: { scenarios: {} },
    smoke,
  });
  for (const r of rows)
    console.log(
      `${r.pass ? 'pass' : 'FAIL'} | ${r.figure} | ${typeof r.ours === 'number' ? r.ours.toFixed(2) : r.ours} ${r.unit}${r.baseline != null ? ` vs ${r.baseline.toFixed(2)}` : ''}${r.ratio != null ? ` (${r.ratio.toFixed(4)}×)` : ''} | ${r.budget}`,
    );
}
