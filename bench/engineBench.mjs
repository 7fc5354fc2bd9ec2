// `npm run bench -- --only engines`: the same bench page in each engine (Chromium over a DevTools pipe, Firefox
// ESR over WebDriver BiDi, WebKitGTK over W3C WebDriver), each against its own floors measured in the same page and
// worker: the first load of the mid-sized coupon set from a direct listing against that engine's floor of a first
// sync (fetch, parse and bulkPut alone: probes.ts fetchAndPutFloor) and, as information, its bare bulkPut; a till's
// first sync from a relay in front of the same mock (what a shop's till on a relay runs) against that engine's bare
// bulkPut of the same records; a warm reload to the first coupon(code); and coupon(code) p50/p99 against a bare
// Comlink call doing one Dexie get. Same budgets as Chromium's rows, as ratios where Chromium's are.
import { launchFirefox } from '../scripts/launch-firefox.mjs';
import { startWebKitDriver } from '../scripts/launch-webkit.mjs';
import { median, quantile, sample } from './stats.mjs';

const ENGINES = ['chromium', 'firefox', 'webkit'];
const callSource = '([f, a]) => window.bench[f](...a)';

/** The bench page open in `engine`; `call(fn, ...args)` runs window.bench[fn] there. */
async function openBenchPage(engine, h) {
  const url = `${h.origin}/index.html`;
  if (engine === 'chromium') {
    // the harness's own page: Chromium as the other rows measure it (a plain DevTools pipe, cdpPage.mjs)
    return { version: `Chromium ${h.version}`, call: h.call, close: async () => undefined };
  }
  if (engine === 'firefox') {
    const browser = await launchFirefox();
    const page = await browser.newPage();
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => 'bench' in window);
    return {
      version: `Firefox ${(await browser.version()).replace(/^firefox\//, '')}`,
      call: (f, ...a) => page.evaluate(([f, a]) => window.bench[f](...a), [f, a]),
      close: () => browser.close(),
    };
  }
  const driver = await startWebKitDriver();
  try {
    const session = await driver.newSession();
    await session.setTimeouts({ script: 30 * 60_000, pageLoad: 60_000 });
    await session.navigate(url);
    for (let i = 0; !(await session.execute('() => "bench" in window')); i++) {
      if (i > 100) throw new Error('the bench page did not load in WebKit');
      await new Promise((r) => setTimeout(r, 100));
    }
    return {
      version: 'WebKitGTK (MiniBrowser)',
      call: (f, ...a) => session.execute(callSource, [f, a]),
      close: async () => {
        await session.close();
        await driver.close();
      },
    };
  } catch (error) {
    await driver.close();
    throw error;
  }
}

/** @example await benchEngines({ h, sizes, log, row, results, randomOf, engines: ['firefox'] }); */
export async function benchEngines({ h, sizes, log, row, results, randomOf, engines = ENGINES }) {
  const size = sizes.mid;
  const api = h.mount('engines', { rateLimits: false, data: { coupons: size } });
  const codes = api.data.coupons.map((c) => String(c.coupon_code));
  await h.warmListing('engines'); // its pages serialised once (cacheListPages), before the first timed run
  // a relay in front of the same mock, its listing done (not the till's time); the tills' long-polls are parked
  // behind a quiet door: a first sync measured alone
  const relay = await h.mountRelay('engines', 'engines');
  await relay.refresh();
  h.quietDoor('engines-quiet', 'engines');
  results.scenarios.engines = {};
  for (const engine of engines) {
    log(
      `${engine}: first load of ${size} coupons vs its floor and bulkPut, a first sync from a relay vs bulkPut, warm reload → coupon(code), ${sizes.lookups} × coupon(code) vs the floor`,
    );
    let page;
    try {
      page = await openBenchPage(engine, h);
    } catch (error) {
      log(`  ${engine} could not start: ${error.message}`);
      row({ figure: `${engine}: first load`, ours: NaN, unit: '', budget: 'runs', pass: false, note: error.message });
      continue;
    }
    const { call } = page;
    const dbName = `bench-engine-${engine}`;
    const relayDb = `bench-engine-relay-${engine}`;
    const options = h.sessionOptions('engines', dbName);
    const relayOptions = {
      ...h.sessionOptions('engines', relayDb),
      baseUrl: `${h.origin}/relay/engines-quiet`,
      auth: undefined,
    };
    try {
      const isolated = await call('crossOriginIsolated');
      const loads = [];
      for (let r = 0; r < sizes.runs; r++) {
        await call('close', 'engine');
        await call('deleteDatabase', dbName);
        await call('prepare', 'engine', options);
        const first = await call('timedFirstSync', 'engine');
        await call('loadFloor', 'engine');
        const floor = await call('putFloor', 'engine');
        // the floor of a first sync in this engine: the same fetches and the same writes, overlapped, nothing else
        await call('loadFloor', 'engine');
        const fetchPut = await call('fetchAndPutFloor', 'engine');
        // a till's first sync from the relay: its snapshot in chunks, against the same engine's bulkPut
        await call('close', 'rtill');
        await call('deleteDatabase', relayDb);
        await call('prepare', 'rtill', relayOptions);
        const fromRelay = await call('timedFirstSync', 'rtill');
        await call('loadFloor', 'rtill');
        const relayFloor = await call('putFloor', 'rtill');
        // the same chunks fetched, parsed and bulkPut alone, overlapped as the engine does: where the time goes
        await call('loadFloor', 'rtill');
        const relayFeed = await call('relayFeedFloor', 'rtill');
        await call('close', 'rtill');
        loads.push({ first, floor, fetchPut, fromRelay, relayFloor, relayFeed });
        log(
          `  run ${r + 1}: first load ${Math.round(first.ms)} ms (written ${first.report.written}), fetch and bulkPut alone ${Math.round(fetchPut.ms)} ms, bulkPut ${Math.round(floor.ms)} ms; from a relay ${Math.round(fromRelay.ms)} ms (written ${fromRelay.report.written}), bulkPut ${Math.round(relayFloor.ms)} ms, its chunks fetched, parsed and bulkPut alone ${Math.round(relayFeed.ms)} ms (${relayFeed.chunks} chunk(s): to the text ${Math.round(relayFeed.fetchMs)} ms, parse ${Math.round(relayFeed.parseMs)} ms, bulkPut ${Math.round(relayFeed.putMs)} ms)`,
        );
      }
      const rate = (records, ms) => records / (ms / 1000);
      const ours = median(loads.map((x) => rate(size, x.first.ms)));
      const floor = median(loads.map((x) => rate(x.floor.records, x.floor.ms)));
      const fetchPutRate = median(loads.map((x) => rate(x.fetchPut.records, x.fetchPut.ms)));
      // each run against its floors of the same run (the machine's load moves both), then the median ratio
      const floorRatio = median(loads.map((x) => rate(size, x.first.ms) / rate(x.fetchPut.records, x.fetchPut.ms)));
      const bulkPutRatio = median(loads.map((x) => x.floor.ms / x.first.ms));
      const fetchPutRatio = median(loads.map((x) => x.floor.ms / x.fetchPut.ms));
      const relayRate = median(loads.map((x) => rate(size, x.fromRelay.ms)));
      const relayFloorRate = median(loads.map((x) => rate(x.relayFloor.records, x.relayFloor.ms)));
      const relayRatio = median(loads.map((x) => x.relayFloor.ms / x.fromRelay.ms));
      const relayFeedRate = median(loads.map((x) => rate(x.relayFeed.records, x.relayFeed.ms)));
      const relayFeedRatio = median(loads.map((x) => x.relayFloor.ms / x.relayFeed.ms));
      const firstMs = median(loads.map((x) => x.first.ms));
      const relayMs = median(loads.map((x) => x.fromRelay.ms));

      // keyed lookups against the floor, in turn as Chromium's rows (warm-up first)
      await call('keyedLookups', 'engine', 'coupon', sample(codes, sizes.warmup, randomOf), true);
      await call('keyedLookups', 'engine', 'coupon', sample(codes, sizes.warmup, randomOf), false);
      const rounds = [];
      for (let r = 0; r < sizes.runs; r++) {
        const block = (isFloor) =>
          call('keyedLookups', 'engine', 'coupon', sample(codes, sizes.lookups, randomOf), isFloor);
        const [f, o] = r % 2 === 0 ? [await block(true), await block(false)] : [null, await block(false)];
        const fl = f ?? (await block(true));
        rounds.push({
          p50: quantile(o.ms, 0.5),
          p99: quantile(o.ms, 0.99),
          f50: quantile(fl.ms, 0.5),
          f99: quantile(fl.ms, 0.99),
          found: o.found + fl.found,
        });
      }
      await call('close', 'engine');

      const reloads = [];
      const picked = sample(codes, sizes.emissions + 1, randomOf);
      await call('reload', 'reload', options, picked[0]); // the first one fetches the worker script
      for (let r = 1; r <= sizes.emissions; r++) reloads.push(await call('reload', 'reload', options, picked[r]));
      // best effort: WebKit keeps a terminated worker's connection open for a while, which blocks the delete (the
      // next run deletes the database before it starts anyway)
      await call('deleteDatabase', dbName).catch((error) =>
        log(`  ${engine}: the database is left for the next run (${error.message.split(' | ')[0]})`),
      );

      const p50 = median(rounds.map((x) => x.p50));
      const p99 = median(rounds.map((x) => x.p99));
      const f50 = median(rounds.map((x) => x.f50));
      const f99 = median(rounds.map((x) => x.f99));
      const allFound = rounds.every((x) => x.found === 2 * sizes.lookups);
      const reloadMs = median(reloads.map((x) => x.ms));
      results.scenarios.engines[engine] = {
        version: page.version,
        crossOriginIsolated: isolated,
        loads,
        rounds,
        reloads,
      };
      const note = isolated ? undefined : 'not cross-origin isolated: timer resolution is coarse';
      const label = engine;
      log(
        `  ${engine} (${page.version}): first load ${Math.round(firstMs)} ms (${floorRatio.toFixed(2)}× its floor, ${bulkPutRatio.toFixed(2)}× bulkPut); from a relay ${Math.round(relayMs)} ms (${relayRatio.toFixed(2)}× bulkPut); reload ${reloadMs.toFixed(1)} ms; coupon(code) p50 ${p50.toFixed(2)} / p99 ${p99.toFixed(2)} ms, floor ${f50.toFixed(2)} / ${f99.toFixed(2)} ms`,
      );
      const okFirst = loads.every((x) => x.first.report.ok && x.first.report.written === size);
      row({
        figure: `${label}: first load, ${size.toLocaleString('en-US')} coupons → all answered`,
        ours,
        baseline: fetchPutRate,
        unit: 'rec/s',
        ratio: floorRatio,
        budget: '≥ 0.85 × its floor (fetch, parse and bulkPut alone)',
        pass: okFirst && floorRatio >= 0.85,
        note,
      });
      row({
        figure: `${label}:   (first load against bare bulkPut)`,
        ours,
        baseline: floor,
        unit: 'rec/s',
        ratio: bulkPutRatio,
        budget: 'info',
        pass: true,
        info: true,
      });
      row({
        figure: `${label}:   (fetch, parse and bulkPut alone: the floor of a first load)`,
        ours: fetchPutRate,
        baseline: floor,
        unit: 'rec/s',
        ratio: fetchPutRatio,
        budget: 'info',
        pass: true,
        info: true,
      });
      row({
        figure: `${label}:   (first load, wall time)`,
        ours: firstMs,
        unit: 'ms',
        budget: 'info',
        pass: true,
        info: true,
      });
      row({
        figure: `${label}: till via relay: first sync, ${size.toLocaleString('en-US')} coupons`,
        ours: relayRate,
        baseline: relayFloorRate,
        unit: 'rec/s',
        ratio: relayRatio,
        budget: '≥ 0.8 × bulkPut',
        pass: loads.every((x) => x.fromRelay.report.ok && x.fromRelay.report.written === size) && relayRatio >= 0.8,
        note,
      });
      row({
        figure: `${label}:   (its chunks fetched, parsed and bulkPut alone: the floor of a first sync from a relay)`,
        ours: relayFeedRate,
        baseline: relayFloorRate,
        unit: 'rec/s',
        ratio: relayFeedRatio,
        budget: 'info',
        pass: true,
        info: true,
      });
      row({
        figure: `${label}:   (till via relay: first sync, wall time)`,
        ours: relayMs,
        unit: 'ms',
        budget: 'info',
        pass: true,
        info: true,
      });
      row({
        figure: `${label}: reload, warm database → first coupon(code)`,
        ours: reloadMs,
        unit: 'ms',
        budget: '≤ 150 ms',
        pass: reloadMs <= 150 && reloads.every((x) => x.found),
        note,
      });
      row({
        figure: `${label}: coupon(code), ${size.toLocaleString('en-US')} stored: p50`,
        ours: p50,
        baseline: f50,
        unit: 'ms',
        ratio: p50 / f50,
        budget: '≤ 1.5 × floor p50',
        pass: allFound && p50 <= 1.5 * f50,
        note,
      });
      row({
        figure: `${label}: coupon(code), ${size.toLocaleString('en-US')} stored: p99`,
        ours: p99,
        baseline: f99,
        unit: 'ms',
        ratio: p99 / f99,
        budget: '≤ 1.5 × floor p99',
        pass: allFound && p99 <= 1.5 * f99,
        note,
      });
    } catch (error) {
      // one engine failing is a failed row of its own, not the end of the bench
      log(`  ${engine} failed: ${error.message}`);
      row({
        figure: `${engine}: measured`,
        ours: NaN,
        unit: '',
        budget: 'runs',
        pass: false,
        note: error.message.slice(0, 200),
      });
    } finally {
      await call('close', 'engine').catch(() => undefined);
      await call('close', 'rtill').catch(() => undefined);
      await page.close().catch(() => undefined);
    }
  }
  h.unmount('engines');
}
