// The relay hub's figures (issue 20): one hub instance's heap with 1, 100 and 200 shops of 2,000 coupons each (flat
// beyond maxHotShops 100: within 1.2 × the 100-shop figure; `--hub-shops 1,100,1000` for 1,000 shops, about 5
// minutes of listing and 3 GB of Redis), and a till's first sync of a cold shop (served again from Redis) against
// the same shop hot (≤ 2 ×). Each setup in a process of its own (hubMemoryChild.mjs, with a redis-server of its
// own). --smoke: 1, 10 and 20 shops of 200 coupons with maxHotShops 10.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** Runs one setup in its own process. */
async function measure(root, setup) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', `${root}bench/hubMemoryChild.mjs`, JSON.stringify(setup)],
    { cwd: root, maxBuffer: 1 << 20, timeout: 600_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/** @example await benchHub({ root, log, row, results, smoke: false, shops: [1, 100, 200] }); */
export async function benchHub({ root, log, row, results, smoke, shops: given }) {
  const coupons = smoke ? 200 : 2_000;
  const counts = given ?? (smoke ? [1, 10, 20] : [1, 100, 200]);
  const budget = counts[1];
  const scenario = (results.scenarios.hub = { coupons, maxHotShops: budget, setups: [] });
  const heaps = {};
  for (const shops of counts) {
    log(`hub: ${shops} shop(s) of ${coupons} coupons, maxHotShops ${budget} (a process of its own, its own redis-server)`);
    const m = await measure(root, { shops, coupons, maxHotShops: budget });
    scenario.setups.push({ shops, ...m });
    heaps[shops] = m.heap;
    log(`  heap ${(m.heap / 1e6).toFixed(1)} MB with ${m.hot} hot; every shop listed in ${(m.listMs / 1000).toFixed(1)} s`);
    const [, full, beyond] = counts;
    if (shops === counts[0]) {
      row({ figure: `hub heap, ${shops} shop of ${coupons.toLocaleString('en-US')} coupons (fixed costs)`, ours: m.heap / 1e6, unit: 'MB', budget: 'info', pass: true, info: true });
    } else if (shops === full) {
      row({ figure: `hub heap, ${shops} hot shops of ${coupons.toLocaleString('en-US')} coupons`, ours: m.heap / 1e6, unit: 'MB', budget: 'info (the hot-shop budget)', pass: true, info: true });
    } else if (shops === beyond) {
      const ratio = m.heap / heaps[full];
      row({ figure: `hub heap, ${shops.toLocaleString('en-US')} shops, maxHotShops ${budget}`, ours: m.heap / 1e6, baseline: heaps[full] / 1e6, unit: 'MB', ratio, budget: `≤ 1.2 × ${full} shops`, pass: ratio <= 1.2 });
      if (m.coldSyncMs !== null) {
        const r = m.coldSyncMs / m.hotSyncMs;
        row({ figure: `till's first sync of a cold shop (from Redis) vs hot, ${coupons.toLocaleString('en-US')} coupons (median of 5)`, ours: m.coldSyncMs, baseline: m.hotSyncMs, unit: 'ms', ratio: r, budget: '≤ 2 ×', pass: r <= 2 });
      }
    }
  }
}
