// A storefront's figures (issue 18 "Measured"), on loopback with engines in Node (`worker: false`, fake-indexeddb):
// a storefront's first visit on a relay (bytes, and time to its first productOptions answer) against a till's full
// sync of the same relay and a single product read; and 1,000 concurrent anonymous reads of one untracked product
// through one relay (upstream calls). Measured in a child process (storefrontChild.mjs). Run with
// `npm run bench -- --only storefront`, or alone: `node bench/storefrontBench.mjs [--smoke]`.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * @example await benchStorefront({ root, sizes, log, row, results, smoke });
 */
export async function benchStorefront({ root, sizes, log, row, results, smoke }) {
  log(`storefront: first visit on a relay (${sizes.big} coupons, 20 tracked products) vs a till's full sync; ${smoke ? 100 : 1000} anonymous reads of one untracked product`);
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', `${root}bench/storefrontChild.mjs`, JSON.stringify({ sizes: { big: sizes.big, small: sizes.small, runs: sizes.runs }, smoke })],
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
  await benchStorefront({ root, sizes, log: (m) => console.log(m), row: (r) => rows.push(r), results: { scenarios: {} }, smoke });
  for (const r of rows) console.log(`${r.pass ? 'pass' : 'FAIL'} | ${r.figure} | ${typeof r.ours === 'number' ? r.ours.toFixed(2) : r.ours} ${r.unit}${r.baseline != null ? ` vs ${r.baseline.toFixed(2)}` : ''}${r.ratio != null ? ` (${r.ratio.toFixed(4)}×)` : ''} | ${r.budget}`);
}
