#!/usr/bin/env node
// Where the engine's time goes: runs one bench scenario with the V8 CPU profiler on the engine's worker (CDP) and
// prints the functions with the most self time; the full profile is written to bench-results/<scenario>.cpuprofile
// (open it in Chrome DevTools → Performance), and the worker's time by part of the listing. Usage: node
// bench/profile.mjs sync|resync|floor|lookups|floor-lookups|relay [--coupons N] (relay: a till's first sync from a
// relay in front of the mock)
import { mkdir, writeFile } from 'node:fs/promises';
import { log, root, startHarness } from './harness.mjs';
import { cpuBetween, cpuByProcess } from './processCpu.mjs';
import { attachWorker, workerTargets } from './workerHeap.mjs';

const scenario = process.argv[2] ?? 'sync';
const i = process.argv.indexOf('--coupons');
const coupons = i > 0 ? Number(process.argv[i + 1]) : 20_000;

/** Self time per function (ms), largest first. */
function topSelf(profile, n = 30) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  const dt = profile.timeDeltas;
  for (let k = 0; k < profile.samples.length; k++) {
    const node = byId.get(profile.samples[k]);
    const f = node.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (dt[k] ?? 0) / 1000);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return { total, top: [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n) };
}

/**
 * The worker's time by part of the direct listing: each sample goes to the first part named by a frame from the
 * leaf up (function names need BENCH_MINIFY=0); the rest is Dexie's and the promises' own work.
 */
const parts = [
  ['idle', /^\(idle\)$/],
  ['garbage collection', /^\(garbage collector\)$/],
  ['validation (record readers)', /^(parseRecords|parseRecord|readRecord|checkFeed)$/],
  ['unreadable marks', /^(clearUnreadable|markUnreadable|clearMarks|unreadableMarks)$/],
  ['hashing the pages', /^rowsHash$/],
  ['JSON.parse of the answers', /^readEnvelope$/],
  ['page hashes, listed codes', /^(putDirect|fillListedPages|endLean)$/],
  ['the checkpoint', /^(storedCheckpoint|nextCheckpoint|readCheckpoint|markUnreadable)$/],
  ['putting the records (as bulkPut does)', /^(mutate|bulkAdd|bulkPut|inSlices)$/],
  ['requests (fetch, transport)', /^(once|fetch|request|text|listCouponRows|acquire)$/],
  ['status and clock messages', /^(postMessage|set|progress|sample)$/],
  ['transactions (Dexie)', /^(transaction|tempTransaction|storePages)$/],
  ['the listing loop', /^(syncCoupons|codeOf|changedUnder|push|kick)$/],
];
function byPart(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((c) => [c, node.id])));
  const ms = new Map();
  for (let k = 0; k < profile.samples.length; k++) {
    let part = null;
    for (let id = profile.samples[k]; id !== undefined && !part; id = parent.get(id)) {
      part = parts.find(([, re]) => re.test(byId.get(id).callFrame.functionName))?.[0] ?? null;
    }
    part ??= 'other (Dexie, promises)';
    ms.set(part, (ms.get(part) ?? 0) + (profile.timeDeltas[k] ?? 0) / 1000);
  }
  return [...ms.entries()].sort((a, b) => b[1] - a[1]);
}

const h = await startHarness();
try {
  const mock = h.mount('p', { rateLimits: false, data: { coupons } });
  let options = h.sessionOptions('p', 'bench-profile');
  if (scenario === 'relay') {
    await (await h.mountRelay('p', 'p')).refresh();
    options = { ...options, baseUrl: `${h.origin}/relay/p`, auth: undefined };
  }
  await h.call('deleteDatabase', 'bench-profile');
  const before = new Set((await workerTargets(h.cdp)).map((t) => t.targetId));
  await h.call('prepare', 'p', options);
  const target = (await workerTargets(h.cdp)).find((t) => !before.has(t.targetId));
  const worker = await attachWorker(h, target.targetId);
  await worker.send('Profiler.enable');
  await worker.send('Profiler.setSamplingInterval', { interval: 200 });
  if (scenario !== 'sync' && scenario !== 'relay') await h.call('timedFirstSync', 'p');
  if (scenario === 'floor') await h.call('loadFloor', 'p');
  const codes = mock.data.coupons.slice(0, 1000).map((c) => String(c.coupon_code));
  const pageCdp = h.pageSession;
  if (scenario === 'lookups' || scenario === 'floor-lookups') {
    await h.call('keyedLookups', 'p', 'coupon', codes.slice(0, 200), scenario === 'floor-lookups');
    await pageCdp.send('Profiler.enable');
    await pageCdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await pageCdp.send('Profiler.start');
  }
  await worker.send('Profiler.start');
  const cpuBefore = cpuByProcess(h.browserPid);
  let result;
  if (scenario === 'sync' || scenario === 'relay') result = await h.call('timedFirstSync', 'p');
  else if (scenario === 'resync') result = await h.call('timedSync', 'p');
  else if (scenario === 'floor') result = await h.call('putFloor', 'p');
  else if (scenario === 'lookups' || scenario === 'floor-lookups') {
    const r = await h.call('keyedLookups', 'p', 'coupon', codes.slice(200, 1000), scenario === 'floor-lookups');
    const sorted = [...r.ms].sort((a, b) => a - b);
    result = { ms: r.ms.reduce((a, b) => a + b, 0) };
    log(
      `p50 ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)].toFixed(3)} ms`,
    );
    const { profile: pageProfile } = await pageCdp.send('Profiler.stop');
    const { total, top } = topSelf(pageProfile, 15);
    log(`page: ${Math.round(total)} ms sampled`);
    for (const [k, ms] of top)
      console.log(`  page ${ms.toFixed(1).padStart(8)} ms  ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`);
  } else throw new Error(`unknown scenario ${scenario}`);
  const cpu = cpuBetween(cpuBefore, cpuByProcess(h.browserPid));
  const { profile } = await worker.send('Profiler.stop');
  log(
    `CPU time by process: ${Object.entries(cpu)
      .map(([k, v]) => `${k} ${v} ms`)
      .join(', ')}`,
  );
  await worker.detach();
  await mkdir(`${root}bench-results`, { recursive: true });
  const file = `${root}bench-results/${scenario}.cpuprofile`;
  await writeFile(file, JSON.stringify(profile));
  const { total, top } = topSelf(profile);
  log(
    `${scenario} of ${coupons} coupons: ${Math.round(result.ms ?? 0)} ms wall; ${Math.round(total)} ms sampled in the worker; profile: ${file}`,
  );
  if (globalThis.__mockN)
    log(
      `mock: ${globalThis.__mockN} requests, ${(globalThis.__mockMs / globalThis.__mockN).toFixed(2)} ms each from arrival to the last byte sent`,
    );
  for (const [k, ms] of top)
    console.log(`${ms.toFixed(1).padStart(8)} ms  ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`);
  const split = byPart(profile);
  const busy = split.filter(([k]) => k !== 'idle').reduce((a, [, ms]) => a + ms, 0);
  log(`by part (${Math.round(busy)} ms busy):`);
  for (const [k, ms] of split)
    console.log(
      `${ms.toFixed(0).padStart(8)} ms  ${k === 'idle' ? '     ' : `${((100 * ms) / busy).toFixed(1).padStart(4)}%`}  ${k}`,
    );
} finally {
  await h.call('close', 'p').catch(() => undefined);
  await h.close();
}
