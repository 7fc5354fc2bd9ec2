// The claim's figures (issue 38): online, the relay decides which till's "yes" an issued coupon gets. (1) Two tills
// ask for one voucher at the same moment, a fresh voucher each round: exactly one yes each round, on one relay (its
// memory store) and on three instances sharing one Redis (each till on its own instance). (2) What the claim adds to
// an online verdict of an issued coupon: a till whose verdict waits for the claim against today's verdict (the API's
// answer and the journal, the use sent after it: the same engine whose claims fail before they leave it), on two
// relays alike, interleaved in the same run.
// Engines in this process (`worker: false`, fake-indexeddb), the relays in this process on loopback, the mock API
// with no latency, in a child process under tsx (the engine imports its chunks when it needs them, which Vite's
// module runner cannot do once its import is over). Run with `npm run bench -- --only claims`, or alone:
// `node bench/claimBench.mjs [--smoke]`.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { quantile } from './stats.mjs';

const KEY = 'bench-claims-key';
const SECRET = 'bench-claims-secret';
const SHOP = 'bench-claims';

/** The till a request comes from: its bearer token is its name (the bench's own authorize). */
const tillOf = (req) => {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  return token ? { id: `till:${token}`, identified: true } : (req.socket.remoteAddress ?? 'unknown');
};

/** Serves a relay on loopback once it has listed the shop; resolves its base URL and a close. */
async function serve(relay) {
  await relay.refresh();
  const server = createServer((req, res) => relay(req, res));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${server.address().port}/shop-api`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await relay.close();
    },
  };
}

/**
 * Runs the claims' figures in a child process and reports its rows.
 * @example await benchClaims({ root, log, row, results, smoke });
 */
export async function benchClaims({ root, log, row, results, smoke }) {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', ...(smoke ? ['--smoke'] : [])];
  const { stdout } = await promisify(execFile)(process.execPath, args, {
    cwd: root,
    timeout: 600_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const message = JSON.parse(line);
    if (message.log) log(message.log);
    if (message.row) row(message.row);
    if (message.scenario) results.scenarios.claims = message.scenario;
  }
}

/** The figures, measured in this process (the child). */
async function measure({ root, log, row, results, smoke }) {
  const mockServer = await import(`${root}packages/mock-server/src/index.ts`);
  const relayEntry = await import(`${root}packages/relay/src/index.ts`);
  const lib = await import(`${root}packages/shop-lookup/src/index.ts`);
  const redisServer = await import(`${root}packages/test-kit/src/redisServer.ts`);
  const rounds = smoke ? 10 : 100;
  const scenario = (results.scenarios.claims = {});
  const api = await mockServer.startMockShopApi({
    key: KEY,
    secret: SECRET,
    rateLimits: false,
    data: { coupons: 50, issuedCoupons: 10 },
  });
  // a fresh unused voucher for every ask
  const open = api.data.issuedCoupons.find((c) => c.coupon_issue_code === mockServer.MOCK_CODES.issuedUnused);
  let made = 0;
  const voucher = () => {
    const code = `IC-CLAIM-${++made}`;
    api.upsertIssuedCoupon({ ...open, coupon_issue_code: code });
    return code;
  };
  const relayOptions = (extra = {}) => ({
    key: KEY,
    secret: SECRET,
    target: api.url,
    basePath: '/shop-api',
    public: true,
    clientId: tillOf,
    rateLimits: false,
    // (the bench's tills ask round after round, faster than a till's 20 requests a second: no client bound here)
    clientLimits: false,
    refreshIntervalMs: 3_600_000,
    ...extra,
  });
  const tills = [];
  let dbs = 0;
  const tillOn = async (base, name, fetchFn = fetch) => {
    const till = lib.createShopLookup({
      baseUrl: base,
      token: name,
      fetch: fetchFn,
      worker: false,
      indexedDB: new IDBFactory(),
      IDBKeyRange,
      rateLimits: false,
      dbName: `claims-${++dbs}`,
    });
    tills.push(till);
    const report = await till.sync();
    if (!report.ok) throw new Error(`a bench till could not sync: ${JSON.stringify(report.errors)}`);
    return till;
  };
  const closing = [];
  let redis;
  try {
    // ---- two tills, one voucher, at the same moment ---------------------------------------------------------------
    /** Rounds of two tills asking at once for a fresh voucher; how many rounds had exactly one yes. */
    const contest = async (one, two) => {
      let single = 0;
      let claimed = 0;
      for (let i = 0; i < rounds; i++) {
        const code = voucher();
        const verdicts = await Promise.all([
          one.validateCoupon(code, { amount: 32000, orderId: `A-${i}` }),
          two.validateCoupon(code, { amount: 32000, orderId: `B-${i}` }),
        ]);
        const yes = verdicts.filter((v) => v.ok);
        if (yes.length === 1) single++;
        else
          log(
            `claims: round ${i}: ${yes.length} yes (${verdicts.map((v) => `${v.ok ? 'yes' : v.reason}, claim ${v.claim ?? 'none'}`).join('; ')})`,
          );
        // (the other till refused by the relay's claim, not by a use it had heard of already)
        if (verdicts.some((v) => v.claim === 'refused')) claimed++;
      }
      return { single, claimed };
    };
    const figure = (where) => `claims: two tills ask for one voucher at once, a round each: exactly one yes (${where})`;
    {
      const served = await serve(relayEntry.createShopRelay(relayOptions()));
      closing.push(served.close);
      const [one, two] = [await tillOn(served.base, 'front-1'), await tillOn(served.base, 'front-2')];
      const { single, claimed } = await contest(one, two);
      scenario.oneRelay = { rounds, single, claimed };
      log(
        `claims, 1 relay: ${single} of ${rounds} rounds with exactly one yes (in ${claimed} the other till was refused by its claim)`,
      );
      row({
        figure: figure('1 relay'),
        ours: single,
        unit: `of ${rounds}`,
        budget: `${rounds} of ${rounds}`,
        pass: single === rounds,
      });
    }
    {
      redis = await redisServer.startRedisServer();
      const instances = [];
      for (let i = 0; i < 3; i++) {
        const served = await serve(relayEntry.createShopRelay(relayOptions({ redis: redis.url, shopId: SHOP })));
        closing.push(served.close);
        instances.push(served);
      }
      const [one, two] = [await tillOn(instances[0].base, 'back-1'), await tillOn(instances[1].base, 'back-2')];
      const { single, claimed } = await contest(one, two);
      scenario.threeInstances = { rounds, single, claimed };
      log(
        `claims, 3 instances on one Redis: ${single} of ${rounds} rounds with exactly one yes (in ${claimed} the other till was refused by its claim)`,
      );
      row({
        figure: figure('3 instances on one Redis'),
        ours: single,
        unit: `of ${rounds}`,
        budget: `${rounds} of ${rounds}`,
        pass: single === rounds,
      });
    }

    // ---- what the claim adds to an online verdict -------------------------------------------------------------------
    {
      // (the contests' tills rest: only the two timed ones run now)
      for (const till of tills.splice(0)) await till.close();
      const withUses = await serve(relayEntry.createShopRelay(relayOptions()));
      const today = await serve(relayEntry.createShopRelay(relayOptions()));
      closing.push(withUses.close, today.close);
      const claiming = await tillOn(withUses.base, 'side-1');
      // today's verdict: the API's answer, the journal, then the use sent to the relay in the background. The same
      // engine on the same kind of relay, whose claim is answered before it leaves the till (refused at once: the
      // use then goes as today)
      const plain = await tillOn(today.base, 'side-2', async (input, init) => {
        if (typeof init?.body === 'string' && init.body.includes('"claim":true'))
          return new Response(JSON.stringify({ code: 'bad_request', message: 'today: no claim' }), {
            status: 400,
            headers: { 'content-type': 'application/json' },
          });
        return fetch(input, init);
      });
      const timed = async (till) => {
        const code = voucher();
        const s = performance.now();
        const v = await till.validateCoupon(code, { amount: 32000, orderId: `T-${made}` });
        const ms = performance.now() - s;
        if (!v.ok) throw new Error(`a bench verdict was not a yes: ${JSON.stringify(v.detail)}`);
        // (the use on its way to the relay, as a till's next sale would find it)
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { ms, claim: v.claim ?? null };
      };
      // warm both (their checkout chunks, the relay's first commit)
      for (let i = 0; i < 5; i++) {
        await timed(claiming);
        await timed(plain);
      }
      const claimMs = [];
      const plainMs = [];
      let granted = 0;
      // (three times the rounds: a p99 of 300 samples is not just the slowest one)
      const timedRounds = rounds * 3;
      for (let i = 0; i < timedRounds; i++) {
        const a = await timed(claiming);
        claimMs.push(a.ms);
        if (a.claim === 'granted') granted++;
        plainMs.push((await timed(plain)).ms);
      }
      const p99 = quantile(claimMs, 0.99);
      const base99 = quantile(plainMs, 0.99);
      scenario.verdict = {
        rounds: timedRounds,
        granted,
        claim: { p50: quantile(claimMs, 0.5), p99 },
        today: { p50: quantile(plainMs, 0.5), p99: base99 },
      };
      log(
        `claims: an online verdict with the claim p50 ${quantile(claimMs, 0.5).toFixed(1)} / p99 ${p99.toFixed(1)} ms vs today's p50 ${quantile(plainMs, 0.5).toFixed(1)} / p99 ${base99.toFixed(1)} ms (${granted} of ${timedRounds} claims granted)`,
      );
      row({
        figure: "claims: an online verdict of an issued coupon with the relay's claim: p99",
        ours: p99,
        baseline: base99,
        ratio: p99 / base99,
        unit: 'ms',
        budget: '≤ 2 × today’s online verdict',
        pass: p99 <= 2 * base99 && granted === timedRounds,
        note: "baseline: today's verdict (the API's answer, the journal; the use sent after it), the same engine on the same kind of relay, interleaved in the same run",
      });
    }
  } finally {
    for (const till of tills) await till.close().catch(() => undefined);
    for (const close of closing) await close().catch(() => undefined);
    await redis?.stop();
    await api.close();
  }
}

// `node bench/claimBench.mjs [--smoke]`: the claims' rows alone; `--child`: measure here (under tsx) and print them
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const smoke = process.argv.includes('--smoke');
  if (process.argv.includes('--child')) {
    const say = (message) => console.log(JSON.stringify(message));
    const results = { scenarios: {} };
    await measure({ root, smoke, results, log: (line) => say({ log: line }), row: (r) => say({ row: r }) });
    say({ scenario: results.scenarios.claims });
    process.exit(0);
  } else {
    const { formatTable } = await import('./stats.mjs');
    const rows = [];
    await benchClaims({
      root,
      smoke,
      log: (line) => console.log(line),
      row: (r) => rows.push({ baseline: null, ratio: null, ...r }),
      results: { scenarios: {} },
    });
    console.log(formatTable(rows));
  }
}
