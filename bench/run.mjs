#!/usr/bin/env node
// `npm run bench`: builds the bench page, serves it cross-origin isolated with the mock shop API mounted on the
// same origin, drives headless Chromium over a plain DevTools pipe (cdpPage.mjs), and prints one table (figure, ours,
// baseline, ratio, budget, result) plus bench-results/bench.json. Baselines are measured in the same run, in the same
// worker as the engine. Options: --smoke (tiny sizes, seconds), --runs N, --out FILE, --site DIR (where the page is
// built), --only a,b (scenarios: bundle, lists, sync, lookups, reload, tills (a till on a relay), link (a till's
// first sync from a relay over a shaped 20 Mbit/s, 40 ms link: linkBench.mjs), throttled, relay (the relay itself),
// engines (first load, a first sync from a relay, reload and coupon(code) in Chromium, Firefox and WebKit;
// --engines a,b for some of them),
// storefront (a storefront's first visit and 1,000 anonymous reads: storefrontBench.mjs), hub (the relay hub's heap
// with 1, 100, 1,000 shops seeded through the store, --hub-shops a,b,c for others, a cold shop's first sync, listing
// throughput with 1 and 3 instances: hubBench.mjs), uses (issued-coupon uses: 10,000 a minute from 100 tills, and a
// use → another till's long-poll on 1 and 3 instances: usesBench.mjs), cursors (a till token in the wrong hands asking
// made-up snapshot cursors at 20/s: the relay's CPU, Redis's growth, a second till's p99: cursorBench.mjs), claims
// (two tills asking for one voucher at once, on 1 relay and on 3 instances on one Redis, and what the relay's claim
// adds to an online verdict: claimBench.mjs), devtools (coupon(code) on the big till with the devtools panel
// open vs closed: devtoolsBench.mjs)), --part-bound-s N (a part still running after N seconds counts as
// failed). Each part runs on its own (benchParts.mjs): one that fails is a failed row that names it, and the other
// parts' rows, the table and the JSON are written all the same; the exit code is then 1.
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import { minGzipSize } from './bundleSize.mjs';
import { cpuBetween, cpuByProcess } from './processCpu.mjs';
import { log, root, startHarness } from './harness.mjs';
import { benchDevtools } from './devtoolsBench.mjs';
import { benchEngines } from './engineBench.mjs';
import { benchHub } from './hubBench.mjs';
import { benchLink } from './linkBench.mjs';
import { benchRelay } from './relayBench.mjs';
import { benchStorefront } from './storefrontBench.mjs';
import { benchUses } from './usesBench.mjs';
import { benchCursors } from './cursorBench.mjs';
import { benchClaims } from './claimBench.mjs';
import { createParts, partFigure } from './benchParts.mjs';
import { createRandom, formatTable, median, quantile, sample } from './stats.mjs';
import { attachWorker, sampleHeap, workerTargets } from './workerHeap.mjs';

const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const smoke = flag('smoke');
const sizes = smoke
  ? {
      big: 1_000,
      mid: 300,
      small: 100,
      lookups: 20,
      warmup: 5,
      products: 50,
      throttled: 200,
      runs: 1,
      emissions: 2,
      readThroughAfterMs: 300,
    }
  : {
      big: 100_000,
      mid: 10_000,
      small: 1_000,
      lookups: 1_000,
      warmup: 100,
      products: 10_000,
      throttled: 2_000,
      runs: 3,
      emissions: 7,
      readThroughAfterMs: 3_000,
    };
sizes.runs = Number(option('runs', sizes.runs));
const only = option('only', '') ? new Set(option('only', '').split(',')) : null;
// every part, in a smoke run too (the engines' part starts two more browsers)
const wants = (s) => (only ? only.has(s) : true);
const outFile = option('out', `${root}bench-results/bench${smoke ? '-smoke' : ''}.json`);
const FIRST_PRODUCT_NO = 1;

log(`building the bench page (${smoke ? 'smoke sizes' : 'full sizes'}, ${sizes.runs} run(s) per figure)`);
const h = await startHarness(option('site', undefined));
const { call, cdp, mount, sessionOptions } = h;

/**
 * Prepares a worker, samples its heap (with `collect`: the live heap, every 250 ms), runs the engine's first sync.
 * With `keep`, the worker stays attached (`sampled(fn)` runs more work under the same sampling; `detach()` ends it).
 */
async function firstSyncWithHeap(name, options, collect = false, keep = false) {
  const before = new Set((await workerTargets(cdp)).map((t) => t.targetId));
  await call('prepare', name, options);
  const target = (await workerTargets(cdp)).find((t) => !before.has(t.targetId));
  const worker = target ? await attachWorker(h, target.targetId) : null;
  const sampled = async (fn) => {
    const heap = worker ? await sampleHeap(worker, collect ? { everyMs: 250, collect } : {}) : null;
    const result = await fn();
    const mem = heap ? await heap.stop() : null;
    return { ...result, heapPeak: mem?.peak ?? null, heapStart: mem?.first ?? null };
  };
  const sync = await sampled(() => call('timedFirstSync', name));
  if (!keep) await worker?.detach();
  return keep ? { ...sync, sampled, detach: async () => worker?.detach() } : sync;
}

const rows = [];
const results = { smoke, sizes, machine: {}, scenarios: {} };
const row = (r) => rows.push({ baseline: null, ratio: null, ...r });
// each part on its own: one that fails is a failed row naming it, and the next part runs (--part-bound-s N: a part
// still running after N seconds counts as failed)
const parts = createParts({ row, log, boundS: Number(option('part-bound-s', Infinity)) });
// a rejection nothing awaited (a sampler's request, say) fails the part it happened in, not the whole bench
process.on('unhandledRejection', (error) => parts.unhandled(error));
const randomOf = createRandom(20_260_101);

try {
  const version = h.version;
  results.machine = { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version, chromium: version };

  // ---- bundle sizes -------------------------------------------------------------------------------------------------
  if (wants('bundle'))
    await parts.run('bundle', async () => {
      log('bundle sizes');
      const main = await minGzipSize(`${root}packages/shop-lookup/src/index.ts`, root);
      // before the worker answers it loads its entry (which imports nothing: worker/worker.ts) and then the engine's
      // chunk, exposeEngine.ts, with what that imports statically; both count
      const workerEntry = await minGzipSize(`${root}packages/shop-lookup/worker/worker.ts`, root);
      const worker = await minGzipSize(`${root}packages/shop-lookup/worker/exposeEngine.ts`, root);
      worker.gzip += workerEntry.gzip;
      const hooks = await minGzipSize(`${root}packages/shop-lookup/src/react/index.ts`, root, { external: ['react'] });
      const vue = await minGzipSize(`${root}packages/shop-lookup/src/vue/index.ts`, root, { external: ['vue'] });
      // the devtools: their entry, and the panel it loads when mounted (a chunk of its own: lazy)
      const devtools = await minGzipSize(`${root}packages/shop-lookup/src/devtools/index.ts`, root);
      results.scenarios.bundle = { main, worker };
      const lazy = (b) => b.lazy.reduce((a, c) => a + c.gzip, 0) / 1000;
      log(
        `  main entry ${main.gzip} B (+ ${lazy(main).toFixed(1)} kB loaded only with worker: false); worker ${worker.gzip} B before its first answer (+ ${lazy(worker).toFixed(1)} kB loaded right after: ${worker.lazy.map((c) => `${c.file} ${c.gzip} B`).join(', ')})`,
      );
      row({
        figure: 'bundle min+gzip: main entry',
        ours: main.gzip / 1000,
        unit: 'kB',
        budget: '≤ 6 kB',
        pass: main.gzip <= 6000,
      });
      row({
        figure: 'bundle min+gzip: shop-lookup/react (React itself not counted)',
        ours: hooks.gzip / 1000,
        unit: 'kB',
        budget: '≤ 1 kB',
        pass: hooks.gzip <= 1000,
      });
      row({
        figure: 'bundle min+gzip: shop-lookup/vue (Vue itself not counted)',
        ours: vue.gzip / 1000,
        unit: 'kB',
        budget: '≤ 1 kB',
        pass: vue.gzip <= 1000,
      });
      row({
        figure: 'bundle min+gzip: shop-lookup/devtools, entry and panel (the panel loaded when mounted)',
        ours: (devtools.gzip + lazy(devtools) * 1000) / 1000,
        unit: 'kB',
        budget: '≤ 20 kB; entry ≤ 0.5 kB',
        pass: devtools.gzip + lazy(devtools) * 1000 <= 20000 && devtools.gzip <= 500,
      });
      row({
        figure: 'bundle min+gzip: worker (loaded before it answers)',
        ours: worker.gzip / 1000,
        unit: 'kB',
        budget: '≤ 45 kB',
        pass: worker.gzip <= 45000,
      });
      row({
        figure: 'bundle min+gzip: worker, its lazy chunks',
        ours: lazy(worker),
        unit: 'kB',
        budget: 'info',
        pass: true,
        info: true,
      });
    });

  // ---- coupons() first emission, live update, heap of a mid-sized sync -------------------------------------------
  let midHeap = null;
  let midSyncsPeaks = [];
  if (wants('lists') || wants('sync'))
    await parts.run('lists', async () => {
      mount('small', { rateLimits: false, data: { coupons: sizes.small } });
      const mid = mount('mid', { rateLimits: false, data: { coupons: sizes.mid } });
      log(`coupons() first emission with ${sizes.small} and ${sizes.mid} coupons`);
      await call('deleteDatabase', 'bench-small');
      await call('prepare', 'small', sessionOptions('small', 'bench-small'));
      const smallSync = await call('timedFirstSync', 'small');
      const midSyncs = [];
      for (let r = 0; r < sizes.runs; r++) {
        await call('close', 'mid');
        await call('deleteDatabase', 'bench-mid');
        midSyncs.push(await firstSyncWithHeap('mid', sessionOptions('mid', 'bench-mid')));
      }
      midHeap = median(midSyncs.map((s) => s.heapPeak));
      midSyncsPeaks = midSyncs.map((s) => s.heapPeak);
      const smallFirst = [];
      const midFirst = [];
      for (let r = 0; r < sizes.emissions; r++) {
        smallFirst.push(await call('couponsFirstEmission', 'small'));
        midFirst.push(await call('couponsFirstEmission', 'mid'));
      }
      const sm = median(smallFirst.map((x) => x.ms));
      const mm = median(midFirst.map((x) => x.ms));
      results.scenarios.couponsFirstEmission = { small: smallFirst, mid: midFirst, smallSync, midSyncs };
      row({
        figure: `coupons() first emission, ${sizes.small.toLocaleString('en-US')} coupons`,
        ours: sm,
        unit: 'ms',
        budget: '≤ 10 ms',
        pass: sm <= 10 && smallFirst.every((x) => x.count === sizes.small),
      });
      row({
        figure: `coupons() first emission, ${sizes.mid.toLocaleString('en-US')} coupons`,
        ours: mm,
        unit: 'ms',
        budget: '≤ 100 ms',
        pass: mm <= 100 && midFirst.every((x) => x.count === sizes.mid),
      });

      log('live update: a sync changes one coupon → the subscribed coupon(code) emits');
      const live = [];
      const target = mid.data.coupons[Math.floor(sizes.mid * 0.6)];
      for (let r = 0; r < sizes.runs; r++) {
        const newName = `${String(target.name)} (changed ${r + 1})`;
        mid.upsertCoupon({ ...target, name: newName });
        live.push(await call('liveUpdate', 'mid', String(target.coupon_code), newName));
      }
      const lm = median(live.map((x) => x.ms ?? Infinity));
      results.scenarios.liveUpdate = live;
      row({
        figure: 'live update: commit → emission',
        ours: lm,
        unit: 'ms',
        budget: '≤ 20 ms',
        pass: lm <= 20 && live.every((x) => x.written === 1),
      });
      await call('close', 'small');
      await call('close', 'mid');
    });

  // ---- the big sync: throughput vs bulkPut, re-sync, heap; then keyed lookups and reload -------------------------
  const big =
    wants('sync') || wants('lookups') || wants('reload') || wants('devtools')
      ? mount('big', { rateLimits: false, data: { coupons: sizes.big } })
      : null;
  const bigOptions = sessionOptions('big', 'bench-big');
  if (wants('sync'))
    await parts.run('sync', async () => {
      log(`initial sync of ${sizes.big} coupons, re-sync, bulkPut floor`);
      await h.warmListing('big');
      const runs = [];
      for (let r = 0; r < sizes.runs; r++) {
        await call('close', 'big');
        await call('deleteDatabase', 'bench-big');
        // with the CPU time each process used (on 2 cores, none of these can take less than its total / 2)
        let cpu = cpuByProcess(h.browserPid);
        // the worker's heap is sampled (a DevTools call every 50 ms) during the sync and, the same, during bulkPut
        const { sampled, detach, ...synced } = await firstSyncWithHeap('big', bigOptions, false, true);
        const first = { ...synced, cpu: cpuBetween(cpu, (cpu = cpuByProcess(h.browserPid))) };
        const again = { ...(await call('timedSync', 'big')), cpu: cpuBetween(cpu, (cpu = cpuByProcess(h.browserPid))) };
        // the re-sync's floor: the listing alone, every page fetched and JSON-parsed, one request after the other (as
        // the sync must, to see a throttle answer before it sends the next), nothing written
        const listing = await call('fetchListing', 'big', 1);
        await call('loadFloor', 'big');
        cpu = cpuByProcess(h.browserPid);
        const floor = {
          ...(await sampled(() => call('putFloor', 'big'))),
          cpu: cpuBetween(cpu, cpuByProcess(h.browserPid)),
        };
        await detach();
        // the floor of any first sync on this machine: the same fetches and the same writes, overlapped, nothing else
        await call('loadFloor', 'big');
        cpu = cpuByProcess(h.browserPid);
        const fetchPut = {
          ...(await call('fetchAndPutFloor', 'big')),
          cpu: cpuBetween(cpu, cpuByProcess(h.browserPid)),
        };
        runs.push({ first, again, listing, floor, fetchPut });
        const total = (c) => `${(Object.values(c).reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s CPU`;
        log(
          `  run ${r + 1}: first ${Math.round(first.ms)} ms (written ${first.report.written}, ${total(first.cpu)}; ${(fetchPut.ms / first.ms).toFixed(2)}× its floor's throughput), re-sync ${Math.round(again.ms)} ms (written ${again.report.written}, ${total(again.cpu)}), listing alone ${Math.round(listing.ms)} ms (re-sync ${(again.ms / listing.ms).toFixed(2)}×), bulkPut ${Math.round(floor.ms)} ms (${total(floor.cpu)}; sync ${(floor.ms / first.ms).toFixed(2)}× its throughput), fetch and bulkPut alone ${Math.round(fetchPut.ms)} ms (${total(fetchPut.cpu)}; ${(floor.ms / fetchPut.ms).toFixed(2)}× bulkPut's throughput), heap peak ${(first.heapPeak / 1e6).toFixed(1)} MB`,
        );
      }
      const ours = median(runs.map((x) => sizes.big / (x.first.ms / 1000)));
      const floor = median(runs.map((x) => x.floor.records / (x.floor.ms / 1000)));
      const firstMs = median(runs.map((x) => x.first.ms));
      const againMs = median(runs.map((x) => x.again.ms));
      const written = Math.max(...runs.map((x) => x.again.report.written));
      const bigHeap = median(runs.map((x) => x.first.heapPeak));
      // the live heap, in runs of their own (a full collection before each sample slows the sync a little)
      log('  live worker heap (after a full GC every 250 ms) during syncs of both sizes');
      const live = { mid: [], big: [] };
      const liveRuns = { mid: sizes.runs, big: Math.min(2, sizes.runs) }; // a 100,000 sync takes a while
      for (const size of ['mid', 'big']) {
        for (let r = 0; r < liveRuns[size]; r++) {
          await call('close', 'heap');
          await call('deleteDatabase', 'bench-heap');
          live[size].push((await firstSyncWithHeap('heap', sessionOptions(size, 'bench-heap'), true)).heapPeak);
        }
      }
      await call('close', 'heap');
      await call('deleteDatabase', 'bench-heap');
      results.scenarios.heap = {
        rawPeak: { mid: midSyncsPeaks, big: runs.map((x) => x.first.heapPeak) },
        livePeak: live,
      };
      const liveMid = median(live.mid);
      const liveBig = median(live.big);
      results.scenarios.sync = runs;
      const okFirst = runs.every((x) => x.first.report.ok && x.first.report.written === sizes.big);
      // each run's sync against its floor of the same run (the machine's load moves both), then the median ratio: the
      // floor is what no sync can beat here, fetching and parsing every page and writing every record, overlapped,
      // with none of the sync's own work (on 2 cores it reaches about 0.74× bare bulkPut: CPU-bound)
      const rate = (records, ms) => records / (ms / 1000);
      const floorRate = median(runs.map((x) => rate(x.fetchPut.records, x.fetchPut.ms)));
      const floorRatio = median(runs.map((x) => rate(sizes.big, x.first.ms) / rate(x.fetchPut.records, x.fetchPut.ms)));
      row({
        figure: `initial sync, ${sizes.big.toLocaleString('en-US')} coupons`,
        ours,
        baseline: floorRate,
        unit: 'rec/s',
        ratio: floorRatio,
        budget: '≥ 0.85 × its floor (fetch, parse and bulkPut alone)',
        pass: okFirst && floorRatio >= 0.85,
      });
      // the sync and its floor against bare bulkPut of the same run (information: the writes alone)
      const firstRatio = median(runs.map((x) => x.floor.ms / x.first.ms));
      row({
        figure: '  (the initial sync against bare bulkPut)',
        ours,
        baseline: floor,
        unit: 'rec/s',
        ratio: firstRatio,
        budget: 'info',
        pass: true,
        info: true,
      });
      const fetchPutRatio = median(runs.map((x) => x.floor.ms / x.fetchPut.ms));
      row({
        figure: '  (fetch, parse and bulkPut alone: the floor of a first sync)',
        ours: floorRate,
        baseline: floor,
        unit: 'rec/s',
        ratio: fetchPutRatio,
        budget: 'info',
        pass: true,
        info: true,
      });
      row({
        figure: 're-sync, nothing changed: records written',
        ours: written,
        unit: '',
        budget: '0',
        pass: written === 0 && runs.every((x) => x.again.report.ok),
      });
      // A re-sync must fetch and read every page (the API has no "unchanged" answer): its floor is the listing alone,
      // each run's re-sync against the listing of the same run (both on whatever else the machine does then)
      const listingMs = median(runs.map((x) => x.listing.ms));
      const againRatio = median(runs.map((x) => x.again.ms / x.listing.ms));
      row({
        figure: 're-sync, nothing changed: time',
        ours: againMs,
        baseline: listingMs,
        unit: 'ms',
        ratio: againRatio,
        budget: '≤ 1.15 × the listing alone',
        pass: againRatio <= 1.15 && runs.every((x) => x.listing.rows === sizes.big),
      });
      row({
        figure: '  (re-sync against the initial sync)',
        ours: againMs,
        baseline: firstMs,
        unit: 'ms',
        ratio: againMs / firstMs,
        budget: 'info',
        pass: true,
        info: true,
      });
      row({
        figure: `worker heap peak (live), ${sizes.big.toLocaleString('en-US')} sync vs ${sizes.mid.toLocaleString('en-US')}`,
        ours: liveBig / 1e6,
        baseline: liveMid / 1e6,
        unit: 'MB',
        ratio: liveBig / liveMid,
        budget: '≤ 2 × (10k sync)',
        pass: liveBig <= 2 * liveMid,
      });
      row({
        figure: '  (used heap with garbage, sampled every 50 ms)',
        ours: bigHeap / 1e6,
        baseline: midHeap / 1e6,
        unit: 'MB',
        ratio: bigHeap / midHeap,
        budget: 'info',
        pass: true,
        info: true,
      });
    });

  if (wants('lookups') || wants('reload'))
    await parts.run(wants('lookups') ? 'lookups' : 'reload', async () => {
      // (its own first sync when the sync part did not run, or failed)
      if (!wants('sync') || parts.failed.includes('sync')) {
        await call('close', 'big');
        await call('deleteDatabase', 'bench-big');
        await call('prepare', 'big', bigOptions);
        await call('timedFirstSync', 'big');
      }
      const codes = big.data.coupons.map((c) => String(c.coupon_code));
      if (wants('lookups')) {
        log(
          `keyed lookups: ${sizes.lookups} × coupon(code) and productOptionByCode, ${sizes.runs} round(s), each against the floor`,
        );
        await call('seedOptions', 'big', sizes.products, FIRST_PRODUCT_NO);
        const optionKeys = Array.from({ length: sizes.products }, (_, i) => FIRST_PRODUCT_NO + i).flatMap((p) =>
          ['SIZE', 'COLOR', 'MEMO'].map((c) => [p, c]),
        );
        for (const kind of ['coupon', 'option']) {
          const keys = kind === 'coupon' ? codes : optionKeys;
          // warm-up: JIT, IndexedDB caches, Comlink paths
          await call('keyedLookups', 'big', kind, sample(keys, sizes.warmup, randomOf), true);
          await call('keyedLookups', 'big', kind, sample(keys, sizes.warmup, randomOf), false);
          const rounds = [];
          for (let r = 0; r < sizes.runs; r++) {
            // blocks of 1,000, floor and ours in turn (each round changes who goes first), fresh random keys each
            const block = async (floor) =>
              call('keyedLookups', 'big', kind, sample(keys, sizes.lookups, randomOf), floor);
            const [floor, ours] = r % 2 === 0 ? [await block(true), await block(false)] : [null, await block(false)];
            const round = { floor: floor ?? (await block(true)), ours };
            rounds.push({
              p50: quantile(round.ours.ms, 0.5),
              p99: quantile(round.ours.ms, 0.99),
              floorP50: quantile(round.floor.ms, 0.5),
              floorP99: quantile(round.floor.ms, 0.99),
              found: round.ours.found,
              floorFound: round.floor.found,
            });
            log(
              `  ${kind} round ${r + 1}: p50 ${rounds.at(-1).p50.toFixed(2)} / p99 ${rounds.at(-1).p99.toFixed(2)} ms; floor ${rounds.at(-1).floorP50.toFixed(2)} / ${rounds.at(-1).floorP99.toFixed(2)} ms`,
            );
          }
          const p50 = median(rounds.map((x) => x.p50));
          const p99 = median(rounds.map((x) => x.p99));
          const f50 = median(rounds.map((x) => x.floorP50));
          const f99 = median(rounds.map((x) => x.floorP99));
          const allFound = rounds.every((x) => x.found === sizes.lookups && x.floorFound === sizes.lookups);
          results.scenarios[`${kind}Lookups`] = rounds;
          const label =
            kind === 'coupon'
              ? `coupon(code), ${sizes.big.toLocaleString('en-US')} stored`
              : `productOptionByCode, ${sizes.products.toLocaleString('en-US')} × 3 stored`;
          row({
            figure: `${label}: p50`,
            ours: p50,
            baseline: f50,
            unit: 'ms',
            ratio: p50 / f50,
            budget: '≤ 1.5 × floor p50',
            pass: allFound && p50 <= 1.5 * f50,
          });
          // a ratio: on a shared 2-core machine the bare floor's own p99 reaches 3.8 ms, so an absolute budget measures
          // the machine
          row({
            figure: `${label}: p99`,
            ours: p99,
            baseline: f99,
            unit: 'ms',
            ratio: p99 / f99,
            budget: '≤ 1.5 × floor p99',
            pass: allFound && p99 <= 1.5 * f99,
          });
        }
      }
      await call('close', 'big');
      if (wants('reload')) {
        log('reload with a warm database → first coupon(code)');
        const reloads = [];
        const picked = sample(codes, sizes.emissions + 1, randomOf);
        await call('reload', 'reload', bigOptions, picked[0]); // the first load fetches the worker script
        for (let r = 1; r <= sizes.emissions; r++) reloads.push(await call('reload', 'reload', bigOptions, picked[r]));
        const ms = median(reloads.map((x) => x.ms));
        results.scenarios.reload = reloads;
        row({
          figure: 'reload, warm database → first coupon(code)',
          ours: ms,
          unit: 'ms',
          budget: '≤ 150 ms',
          pass: ms <= 150 && reloads.every((x) => x.found),
        });
      }
    });

  // ---- the devtools panel open on the big till: a lookup's p99 against the panel closed ------------------------
  if (wants('devtools'))
    await parts.run('devtools', () =>
      benchDevtools({
        h,
        sizes,
        log,
        row,
        results,
        randomOf,
        codes: big.data.coupons.map((c) => String(c.coupon_code)),
        bigOptions,
        synced: (wants('sync') && !parts.failed.includes('sync')) || wants('lookups') || wants('reload'),
      }),
    );

  // ---- tills on a relay: the relay's snapshot, 304 re-syncs, changes, live
  // --------------------------------------------
  if (wants('tills'))
    await parts.run('tills', async () => {
      log(
        `tills on a relay: initial sync of ${sizes.big} coupons from its snapshot, re-syncs, a live change (${sizes.runs} run(s))`,
      );
      const upstream = mount('relayapi', { rateLimits: false, data: { coupons: sizes.big } });
      // when the relay's listing of the coupons committed (its observer is told right after the commit)
      let committedAt = null;
      const relay = await h.mountRelay('main', 'relayapi', {
        observer: {
          listing: (e) => {
            if (e.resource === 'coupons' && e.ok) committedAt = performance.timeOrigin + performance.now();
          },
        },
      });
      await relay.refresh(); // the relay's own upstream listing: not the till's time
      // the measured till's long-polls are parked (a second door to the same relay): its re-syncs are measured alone,
      // not overtaken by its own live feed; the live row uses a till on the main door
      h.quietDoor('quiet', 'main');
      const relayOptions = (dbName, door = 'quiet') => ({
        ...sessionOptions('relayapi', dbName),
        baseUrl: `${h.origin}/relay/${door}`,
        auth: undefined,
      });
      const changed = Math.min(100, sizes.big);
      const runs = [];
      for (let r = 0; r < sizes.runs; r++) {
        await call('close', 'rtill');
        await call('deleteDatabase', 'bench-rtill');
        await call('prepare', 'rtill', relayOptions('bench-rtill'));
        const first = await call('timedFirstSync', 'rtill');
        const again = await call('timedSync', 'rtill');
        await call('loadFloor', 'rtill');
        const floor = await call('putFloor', 'rtill');
        for (const c of sample(upstream.data.coupons, changed, randomOf))
          upstream.upsertCoupon({ ...c, name: `${String(c.name)} (relay ${r + 1})` });
        await relay.refresh();
        const some = await call('timedSync', 'rtill');
        runs.push({ first, again, floor, some });
        log(
          `  run ${r + 1}: first ${Math.round(first.ms)} ms (written ${first.report.written}), nothing changed ${again.ms.toFixed(1)} ms (${again.report.requests} request, written ${again.report.written}), ${changed} changed ${Math.round(some.ms)} ms (written ${some.report.written}), bulkPut ${Math.round(floor.ms)} ms`,
        );
      }
      // live: a second till keeps coupon(code) open; the change reaches it through its own long-poll
      await call('deleteDatabase', 'bench-rtill2');
      await call('prepare', 'rtill2', relayOptions('bench-rtill2', 'main'));
      await call('timedFirstSync', 'rtill2');
      const live = [];
      for (let r = 0; r < sizes.runs; r++) {
        const target = upstream.data.coupons[Math.floor(sizes.big * 0.4) + r];
        const newName = `${String(target.name)} (live ${r + 1})`;
        await call('watchCoupon', 'rtill2', String(target.coupon_code), newName);
        committedAt = null;
        upstream.upsertCoupon({ ...target, name: newName });
        await relay.refresh();
        // from the relay's commit of the listing that found the change to the second till's emission: the live
        // long-poll's answer, the till's write and its lookup (an observer's long-poll woken by the same commit, the
        // reference before, could answer after the till had emitted: a negative figure)
        const at = await call('watchedAt', 'rtill2');
        live.push({ ms: at === null || committedAt === null ? null : at - committedAt });
      }
      await call('close', 'rtill');
      await call('close', 'rtill2');
      const ours = median(runs.map((x) => sizes.big / (x.first.ms / 1000)));
      const floor = median(runs.map((x) => x.floor.records / (x.floor.ms / 1000)));
      const firstMs = median(runs.map((x) => x.first.ms));
      const directMs = Math.ceil(sizes.big / 100) * 1000; // one list call per second, 100 coupons per page
      const againMs = median(runs.map((x) => x.again.ms));
      const someMs = median(runs.map((x) => x.some.ms));
      const liveMs = median(live.map((x) => x.ms ?? Infinity));
      results.scenarios.tills = { runs, live, directMs };
      const big = sizes.big.toLocaleString('en-US');
      row({
        figure: `till via relay: initial sync, ${big} coupons`,
        ours,
        baseline: floor,
        unit: 'rec/s',
        ratio: ours / floor,
        budget: '≥ 0.9 × bulkPut',
        pass: ours >= 0.9 * floor && runs.every((x) => x.first.report.ok && x.first.report.written === sizes.big),
      });
      row({
        figure: `till via relay: initial sync vs a direct listing at 1 list call/s (${Math.ceil(sizes.big / 100)} pages)`,
        ours: firstMs,
        baseline: directMs,
        unit: 'ms',
        ratio: directMs / firstMs,
        budget: '≥ 50 × faster',
        pass: directMs >= 50 * firstMs,
      });
      row({
        figure: 'till via relay: re-sync, nothing changed',
        ours: againMs,
        unit: 'ms',
        budget: '1 request, 0 writes, ≤ 50 ms',
        pass:
          againMs <= 50 &&
          runs.every((x) => x.again.report.ok && x.again.report.requests === 1 && x.again.report.written === 0),
      });
      row({
        figure: `till via relay: re-sync, ${changed} of ${big} changed`,
        ours: someMs,
        baseline: firstMs,
        unit: 'ms',
        ratio: someMs / firstMs,
        budget: `≤ 0.05 × initial; writes ${changed}`,
        pass: someMs <= 0.05 * firstMs && runs.every((x) => x.some.report.ok && x.some.report.written === changed),
      });
      row({
        figure: 'till via relay: a change upstream → coupon(code) on a second till emits',
        ours: liveMs,
        unit: 'ms',
        budget: '≤ 1000 ms after the relay committed it',
        pass: liveMs <= 1000,
        note: "from the relay's commit of the listing that found the change",
      });
    });

  // ---- a till on a relay over a shop's link: compressed chunks, against bytes ÷ bandwidth + the writes alone -------
  if (wants('link')) await parts.run('link', () => benchLink({ h, sizes, log, row, results }));

  // ---- the API's real rate limits -----------------------------------------------------------------------------------
  if (wants('throttled'))
    await parts.run('throttled', async () => {
      log(
        `sync of ${sizes.throttled} coupons with the real rate limits (${sizes.runs} run(s)), a read-through lookup during it`,
      );
      const runs = [];
      const pages = Math.ceil(sizes.throttled / 100);
      const minimumMs = (pages - 1) * 1000;
      for (let r = 0; r < sizes.runs; r++) {
        const mock = mount(`limited${r}`, { data: { coupons: sizes.throttled } });
        const late = String(mock.data.coupons[sizes.throttled - 3].coupon_code);
        await call('deleteDatabase', `bench-limited${r}`);
        await call(
          'prepare',
          `limited${r}`,
          sessionOptions(`limited${r}`, `bench-limited${r}`, { rateLimits: undefined }),
        );
        const run = await call('throttledSync', `limited${r}`, late, sizes.readThroughAfterMs);
        const throttled = mock.requests.filter((q) => q.throttled).length;
        const lists = mock.requests.filter((q) => q.path === '/v2/shop/coupons').length;
        runs.push({ ...run, throttled, listRequests: lists });
        log(
          `  run ${r + 1}: ${Math.round(run.ms)} ms, ${throttled} throttled, read-through ${Math.round(run.readThroughMs)} ms`,
        );
        await call('close', `limited${r}`);
        await call('deleteDatabase', `bench-limited${r}`);
      }
      const ms = median(runs.map((x) => x.ms));
      const throttled = Math.max(...runs.map((x) => x.throttled));
      const readThrough = median(runs.map((x) => x.readThroughMs));
      results.scenarios.throttled = { minimumMs, runs };
      row({
        figure: `throttled sync, ${sizes.throttled.toLocaleString('en-US')} coupons: throttle answers`,
        ours: throttled,
        unit: '',
        budget: '0',
        pass: throttled === 0,
      });
      row({
        figure: `throttled sync, ${sizes.throttled.toLocaleString('en-US')} coupons: wall time`,
        ours: ms,
        baseline: minimumMs,
        unit: 'ms',
        ratio: ms / minimumMs,
        budget: "≤ 1.1 × the limit's minimum",
        pass: ms <= 1.1 * minimumMs && runs.every((x) => x.report.ok),
      });
      row({
        figure: 'read-through lookup during the throttled sync',
        ours: readThrough,
        unit: 'ms',
        budget: '≤ 1000 ms',
        pass: readThrough <= 1000 && runs.every((x) => x.found && !x.wasLocal),
      });
    });

  // ---- the relay (Node side, loopback) ------------------------------------------------------------------------------
  if (wants('relay')) await parts.run('relay', () => benchRelay({ root, sizes, log, row, results, smoke }));
  if (wants('hub'))
    await parts.run('hub', async () => {
      const shops = option('hub-shops', '') ? option('hub-shops', '').split(',').map(Number) : undefined;
      await benchHub({ root, log, row, results, smoke, shops });
    });
  if (wants('storefront'))
    await parts.run('storefront', () => benchStorefront({ root, sizes, log, row, results, smoke }));
  if (wants('uses')) await parts.run('uses', () => benchUses({ root, log, row, results, smoke }));
  if (wants('cursors')) await parts.run('cursors', () => benchCursors({ root, log, row, results, smoke }));
  if (wants('claims')) await parts.run('claims', () => benchClaims({ root, log, row, results, smoke }));

  // ---- every engine: the same page in Chromium, Firefox and WebKit, each against its own floors -------------------
  if (wants('engines'))
    await parts.run('engines', () =>
      benchEngines({
        h,
        sizes,
        log,
        row,
        results,
        randomOf,
        ...(option('engines', '') ? { engines: option('engines', '').split(',') } : {}),
      }),
    );

  results.rows = rows;
  results.parts = { seconds: parts.seconds, failed: parts.failed };
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, `${JSON.stringify(results, null, 2)}\n`);
  console.log(
    `\nshop-lookup bench${smoke ? ' (smoke sizes)' : ''}: ${results.machine.cores} cores (${results.machine.cpu}), Node ${results.machine.node}, Chromium ${results.machine.chromium}\n`,
  );
  console.log(formatTable(rows));
  const budgeted = rows.filter((r) => !r.info);
  console.log(`\n${budgeted.filter((r) => r.pass).length}/${budgeted.length} rows pass; JSON: ${outFile}`);
  const total = Object.values(parts.seconds).reduce((a, b) => a + b, 0);
  console.log(
    `parts: ${Object.entries(parts.seconds)
      .map(([name, s]) => `${name} ${s} s`)
      .join(', ')} (${Math.round(total)} s)`,
  );
  for (const name of parts.failed)
    console.log(
      `FAILED: the part ${name} did not run to its end: ${rows.find((r) => r.figure === partFigure(name))?.note}`,
    );
  process.exitCode = budgeted.every((r) => r.pass) ? 0 : 1;
} finally {
  await h.close();
}
// a part given up on (--part-bound-s) may still hold timers and sockets: the bench ends here all the same
if (parts.failed.length > 0) process.exit(process.exitCode ?? 1);
