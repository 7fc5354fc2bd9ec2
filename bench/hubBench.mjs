// The relay hub's figures (issue 20). Heap: one hub instance with 1, 100 and 1,000 shops of 2,000 coupons each and a
// memory budget of 100 shops' records (maxHotRecords 200,000, maxHotShops 100): flat beyond it, within 1.2 × the
// 100-shop figure at 1,000. The shops' data is seeded into Redis through the store's own commit (one shop listed from
// the mock, its records committed to every other shop as a listing commits them: listing 2,000,000 coupons upstream
// would take about 5 minutes here); tills then read up to twice the budget's shops. A till's first sync of a cold
// shop (never asked for: served straight from Redis) against the same shop once held in memory (≤ 2 ×). Listing
// throughput: 96 shops of 150 coupons on the multi-shop mock with per-shop rate limits, listed by 1 and by 3 hub
// instances (≥ 2.5 × with 3). Each setup in processes of its own (hubMemoryChild.mjs, hubListingChild.mjs), with a
// redis-server of its own. --smoke: 1, 10 and 20 shops of 200 coupons, a budget of 10 shops; 12 shops listed.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** Runs one setup in its own process; its last line of output is its JSON. */
async function measure(root, file, setup, flags = []) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...flags, '--import', 'tsx', `${root}bench/${file}`, JSON.stringify(setup)],
    { cwd: root, maxBuffer: 1 << 20, timeout: 600_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

const n = (x) => x.toLocaleString('en-US');

/** @example await benchHub({ root, log, row, results, smoke: false, shops: [1, 100, 1000] }); */
export async function benchHub({ root, log, row, results, smoke, shops: given }) {
  const coupons = smoke ? 200 : 2_000;
  const counts = given ?? (smoke ? [1, 10, 20] : [1, 100, 1_000]);
  const budgetShops = counts[1];
  const maxHotRecords = budgetShops * coupons;
  const scenario = (results.scenarios.hub = {
    coupons,
    maxHotShops: budgetShops,
    maxHotRecords,
    setups: [],
    listing: null,
  });
  const heaps = {};
  for (const shops of counts) {
    log(
      `hub: ${n(shops)} shop(s) of ${n(coupons)} coupons seeded through the store's commit, maxHotRecords ${n(maxHotRecords)} (a process of its own, its own redis-server)`,
    );
    const beyond = shops === counts.at(-1) && shops > budgetShops;
    const m = await measure(root, 'hubMemoryChild.mjs', { shops, coupons, budgetShops, pairs: beyond ? 5 : 0 }, [
      '--expose-gc',
    ]);
    scenario.setups.push({ shops, ...m });
    heaps[shops] = m.heap;
    log(
      `  heap ${(m.heap / 1e6).toFixed(1)} MB, ${m.open} shops open, ${m.inMemory} in memory (${n(m.hotRecords)} records); seeded in ${(m.seedMs / 1000).toFixed(1)} s, ${Math.min(shops - (beyond ? 5 : 0), 2 * budgetShops)} snapshots read in ${(m.readMs / 1000).toFixed(1)} s; Redis ${Math.round(m.redisBytesPerCoupon)} bytes a coupon`,
    );
    if (shops === counts[0]) {
      row({
        figure: `hub heap, ${shops} shop of ${n(coupons)} coupons (fixed costs)`,
        ours: m.heap / 1e6,
        unit: 'MB',
        budget: 'info',
        pass: true,
        info: true,
      });
    } else if (shops === budgetShops) {
      row({
        figure: `hub heap, ${shops} shops of ${n(coupons)} coupons, all in memory (maxHotRecords ${n(maxHotRecords)})`,
        ours: m.heap / 1e6,
        unit: 'MB',
        budget: 'info (the budget)',
        pass: true,
        info: true,
      });
      row({
        figure: `hub Redis memory per 100,000 coupons (snapshot and change log), ${shops} shops`,
        ours: (m.redisBytesPerCoupon * 100_000) / 1e6,
        unit: 'MB',
        budget: 'info',
        pass: true,
        info: true,
      });
    } else if (beyond) {
      const ratio = m.heap / heaps[budgetShops];
      row({
        figure: `hub heap, ${n(shops)} shops seeded through the store, maxHotRecords ${n(maxHotRecords)}`,
        ours: m.heap / 1e6,
        baseline: heaps[budgetShops] / 1e6,
        unit: 'MB',
        ratio,
        budget: `≤ 1.2 × ${budgetShops} shops`,
        pass: ratio <= 1.2 && m.hotRecords <= maxHotRecords,
      });
      const r = m.coldSyncMs / m.hotSyncMs;
      row({
        figure: `till's first sync of a cold shop (from Redis) vs in memory, ${n(coupons)} coupons (median of 5)`,
        ours: m.coldSyncMs,
        baseline: m.hotSyncMs,
        unit: 'ms',
        ratio: r,
        budget: '≤ 2 ×',
        pass: r <= 2,
      });
    }
  }

  const listing = { shops: smoke ? 12 : 96, coupons: 150 };
  log(
    `hub listing: ${listing.shops} shops of ${listing.coupons} coupons (per-shop limits: list 1/s), by 1 then 3 instances (processes of their own)`,
  );
  const { runs } = await measure(root, 'hubListingChild.mjs', listing);
  scenario.listing = { ...listing, runs };
  const [one, three] = runs;
  for (const r of runs)
    log(
      `  ${r.instances} instance(s): ${(r.ms / 1000).toFixed(1)} s, ${Math.round(r.shopsPerMinute)} shops/min, ${r.listRequests} list requests, ${r.throttled} throttled`,
    );
  const ratio = three.shopsPerMinute / one.shopsPerMinute;
  row({
    figure: `hub listing, ${listing.shops} shops of ${listing.coupons} coupons (per-shop limits): shops/min, 3 instances vs 1`,
    ours: three.shopsPerMinute,
    baseline: one.shopsPerMinute,
    unit: 'shops/min',
    ratio,
    budget: '≥ 2.5 ×',
    pass: ratio >= 2.5 && runs.every((r) => r.throttled === 0),
  });
}
