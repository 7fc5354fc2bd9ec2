// A till token in the wrong hands (issue 39): the relay command on a redis-server of the bench's own, one till asking
// snapshot chunks at 20 requests a second for 10 s, the real ones (the cursors the relay handed out, answered from its
// compressed copy) or made-up cursors (a new position each, as relays before signed cursors took them, each naming a
// chunk of nearly the whole snapshot at the engine's 10,000, and signed-looking forgeries), and a second till asking the first chunk 10 times a second throughout, and alone for 10 s.
// The three are taken in turn in 1 s slices, so the machine's own load falls on each alike. Figures: the relay
// process's CPU (/proc) with made-up cursors against real chunks, Redis's used_memory growth against the shop's
// kept-bytes bound, and the second till's p99 against its p99 alone. --smoke: 2,000 coupons, 3 s each.
import { Agent } from 'node:http';
import { createClient } from 'redis';
import { runnerImport } from 'vite';
import { cpuOfProcess } from './processCpu.mjs';
import { fetchBuffer, startRelayCommand, until } from './relayProcessBench.mjs';
import { quantile } from './stats.mjs';

const TOKEN_SECRET = 'bench-cursor-signing-secret-0123456789abcdef';
const SHOP = 'bench-cursors';
const RATE = 20;
const SECOND_TILL_RATE = 10;
const MB = 1024 * 1024;

/** Requests at `perSecond` for `ms` (open loop: each sent on time, whatever the last one took); their latencies. */
async function paced(perSecond, ms, send) {
  const latencies = [];
  const gap = 1000 / perSecond;
  const t0 = performance.now();
  const sent = [];
  for (let i = 0; i * gap < ms; i++) {
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + i * gap - performance.now())));
    const s = performance.now();
    sent.push(
      send(i).then(
        (status) => latencies.push({ ms: performance.now() - s, status }),
        () => latencies.push({ ms: performance.now() - s, status: 0 }),
      ),
    );
  }
  await Promise.all(sent);
  return latencies;
}

/** @example await benchCursors({ root, log, row, results, smoke }); */
export async function benchCursors({ root, log, row, results, smoke }) {
  const { module: mockServer } = await runnerImport(`${root}packages/mock-server/src/index.ts`);
  const { module: tillTokens } = await runnerImport(`${root}packages/relay/src/server/tillTokens.ts`);
  const { module: redisServer } = await runnerImport(`${root}packages/test-kit/src/redisServer.ts`);
  const { module: kept } = await runnerImport(`${root}packages/relay/src/defaults.ts`);
  const token = (till) =>
    tillTokens.signTillToken({ secret: TOKEN_SECRET, shop: SHOP, till, expiresAt: Date.now() + 3_600_000 });
  const coupons = smoke ? 2_000 : 10_000;
  const ms = smoke ? 3_000 : 10_000;
  const scenario = (results.scenarios.cursors = { coupons, ms, rate: RATE });
  const redis = await redisServer.startRedisServer();
  const api = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons } });
  const client = createClient({ url: redis.url });
  let relay;
  try {
    await client.connect();
    relay = await startRelayCommand(root, {
      SHOP_API_KEY: 'demo-key',
      SHOP_API_SECRET: 'demo-secret',
      SHOP_API_TARGET: api.url,
      SHOP_ID: SHOP,
      REDIS_URL: redis.url,
      TILL_TOKEN_SECRET: TOKEN_SECRET,
      REFRESH_INTERVAL_MS: '3600000',
      SHOP_API_RATE_LIMITS: 'off',
    });
    await until(async () => (await fetchBuffer(`${relay.url}/readyz`)).status === 200, 300_000);
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const ask = (path, till) =>
      fetchBuffer(`${relay.url}${path}`, {
        agent,
        headers: { authorization: `Bearer ${token(till)}`, 'accept-encoding': 'br' },
      });
    // the snapshot in chunks of 1,000 as a till reads it: the real cursors, each chunk compressed once and kept
    const paths = [];
    const keys = [];
    let version = 0;
    for (let path = '/relay/v1/feed?limit=1000'; path; ) {
      paths.push(path);
      const body = JSON.parse(
        (await fetchBuffer(`${relay.url}${path}`, { headers: { authorization: `Bearer ${token('reader')}` } })).body,
      );
      version = body.version;
      keys.push(...body.upserts.map((u) => u.key));
      path = body.cursor ? `/relay/v1/feed?cursor=${body.cursor}&handle=${body.handle}` : null;
    }
    for (const path of paths) await ask(path, 'reader');
    const handle = JSON.parse(
      (await fetchBuffer(`${relay.url}${paths[0]}`, { headers: { authorization: `Bearer ${token('reader')}` } })).body,
    ).handle;
    log(
      `cursors: ${coupons} coupons on a relay on Redis (${paths.length} chunks of 1,000); one till asking ${RATE}/s, real cursors or made-up ones, ${ms / 1000} s each, in 1 s slices taken in turn with a second till alone`,
    );
    const memory = async () => Number(/^used_memory:(\d+)/m.exec(await client.info('memory'))[1]);
    const realAsk = async (i) => (await ask(paths[i % paths.length], 'thief')).status;
    let forged = 0;
    const madeUpAsk = async () => {
      // a new position each time, as the till asked them: right after one of the first hundred coupons, so
      // each names a chunk of nearly the whole snapshot at the engine's chunk size; every fourth one signed-looking
      const i = forged++;
      const after = `coupons\u0000${keys[i % 100]}~${i}`;
      const signedLooking = i % 4 === 3;
      const payload = Buffer.from(JSON.stringify(signedLooking ? [version, 10_000, after] : [version, after])).toString(
        'base64url',
      );
      const cursor = signedLooking ? `${payload}.${'A'.repeat(43)}` : payload;
      return (await ask(`/relay/v1/feed?cursor=${cursor}&handle=${handle}&limit=10000`, 'thief')).status;
    };
    for (let i = 0; i < 10; i++) await ask(paths[0], 'second'); // its connection and its chunk warm
    // the three conditions in 1 s slices, taken in turn (each round in another order), so the machine's own load
    // (other jobs on its cores) falls on each alike; the second till asks in every slice
    const runs = {
      alone: { first: null, cpu: 0, thief: [], second: [] },
      real: { first: realAsk, cpu: 0, thief: [], second: [] },
      madeUp: { first: madeUpAsk, cpu: 0, thief: [], second: [] },
    };
    const order = Object.keys(runs);
    const memoryBefore = await memory();
    for (let round = 0; round < ms / 1000; round++) {
      for (let k = 0; k < order.length; k++) {
        const run = runs[order[(round + k) % order.length]];
        const before = cpuOfProcess(relay.child.pid);
        const [thief, second] = await Promise.all([
          run.first ? paced(RATE, 1000, run.first) : [],
          paced(SECOND_TILL_RATE, 1000, async () => (await ask(paths[0], 'second')).status),
        ]);
        run.cpu += cpuOfProcess(relay.child.pid) - before;
        run.thief.push(...thief);
        run.second.push(...second);
      }
    }
    const memoryAfter = await memory();
    const real = runs.real;
    const madeUp = runs.madeUp;
    const attack = madeUp.thief;
    const unloaded = runs.alone.second;
    const loaded = madeUp.second;
    const keptKeys = (await client.keys(`shop-lookup:{${SHOP}}:kept:*`)).length;
    const statuses = (list) =>
      Object.fromEntries(
        [...new Set(list.map((l) => l.status))].map((s) => [s, list.filter((l) => l.status === s).length]),
      );
    const p50 = (list) =>
      quantile(
        list.map((l) => l.ms),
        0.5,
      );
    const p99 = (list) =>
      quantile(
        list.map((l) => l.ms),
        0.99,
      );
    const growth = memoryAfter - memoryBefore;
    const bound = kept.STORE_DEFAULTS.maxKeptBytes;
    Object.assign(scenario, {
      chunks: paths.length,
      cpuMs: { alone: runs.alone.cpu, real: real.cpu, madeUp: madeUp.cpu },
      redisBytes: { before: memoryBefore, after: memoryAfter, growth, bound },
      keptKeys,
      statuses: { real: statuses(real.thief), madeUp: statuses(attack), secondTill: statuses(loaded) },
      // (the second till's p99 while the first one asks real chunks, too: how much the machine alone moves it)
      secondTillP99: { unloaded: p99(unloaded), real: p99(real.second), loaded: p99(loaded) },
      secondTillP50: { unloaded: p50(unloaded), real: p50(real.second), loaded: p50(loaded) },
    });
    log(
      `  relay CPU: ${real.cpu} ms (real chunks) vs ${madeUp.cpu} ms (made-up cursors); answers ${JSON.stringify(scenario.statuses)}`,
    );
    log(
      `  Redis used_memory ${(memoryBefore / MB).toFixed(1)} → ${(memoryAfter / MB).toFixed(1)} MB; ${keptKeys} kept chunk keys`,
    );
    const name = `cursors: a till asking made-up cursors at ${RATE}/s for ${ms / 1000} s`;
    row({
      figure: `${name}: relay CPU`,
      ours: madeUp.cpu,
      baseline: real.cpu,
      unit: 'ms',
      ratio: madeUp.cpu / real.cpu,
      budget: '≤ 2 × a till asking real chunks at that rate',
      pass: madeUp.cpu <= 2 * real.cpu && attack.every((l) => l.status === 400 || l.status === 409),
      note: 'baseline: the same till asking the real chunks (the cursors the relay handed out), same rate and time',
    });
    row({
      figure: `${name}: Redis memory growth`,
      ours: growth / MB,
      baseline: bound / MB,
      unit: 'MB',
      ratio: growth / bound,
      budget: "≤ the shop's kept-bytes bound",
      pass: growth <= bound,
    });
    row({
      figure: `${name}: a second till's p99`,
      ours: p99(loaded),
      baseline: p99(unloaded),
      unit: 'ms',
      ratio: p99(loaded) / p99(unloaded),
      budget: '≤ 2 × unloaded',
      pass: p99(loaded) <= 2 * p99(unloaded) && loaded.every((l) => l.status === 200),
      note: `the second till asks the first chunk ${SECOND_TILL_RATE}/s; baseline: the same, alone`,
    });
    agent.destroy();
  } finally {
    await relay?.stop();
    await client.close().catch(() => undefined);
    await Promise.all([api.close(), redis.stop()]);
  }
}
