// The relay's figures (issue 10 "Measure"), on loopback in this Node process: a nothing-changed re-sync answered
// 304 under load against a bare node:http server answering a fixed 304 (same load, same run); upstream list calls
// per refresh with 1, 5 and 20 tills; and the relay's memory holding the big coupon set.
import { Agent, createServer, request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { runnerImport } from 'vite';
import { benchRelayProcess } from './relayProcessBench.mjs';
import { quantile } from './stats.mjs';

const BASE = '/shop-api';

function listen(handler) {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` })));
}
function stop(server) {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** GET with node:http, the body as JSON (or null), status and headers. */
function get(url, headers = {}, agent = undefined) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** `clients` keep-alive clients sending the same request back to back for `ms`: requests/s, p50, p99, non-304s. */
async function load(url, headers, clients, ms) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const latencies = [];
  let wrong = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const req = request(url, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(performance.now() - t0);
          if (res.statusCode !== 304) wrong++;
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
  const started = performance.now();
  const end = started + ms;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < end) await one();
  }));
  const elapsed = performance.now() - started;
  agent.destroy();
  return { rps: latencies.length / (elapsed / 1000), p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), requests: latencies.length, wrong };
}

let gcFn = null;
function gc() {
  if (!gcFn) {
    setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc');
  }
  gcFn();
  gcFn();
}

/**
 * Runs the relay scenarios and adds their rows.
 * @example await benchRelay({ root, sizes, log, row, results });
 */
export async function benchRelay({ root, sizes, log, row, results, smoke }) {
  const { module: mockServer } = await runnerImport(`${root}mock-server/index.ts`);
  const { module: relayEntry } = await runnerImport(`${root}relay/index.ts`);
  const startRelayOn = async (api, extra = {}) => {
    const relay = relayEntry.createShopRelay({
      key: 'demo-key', secret: 'demo-secret', target: api.url, basePath: BASE, public: true, rateLimits: false, clientLimits: false, ...extra,
    });
    const { server, origin } = await listen((req, res) => relay(req, res));
    await relay.ready;
    await relay.refresh();
    return { relay, server, url: `${origin}${BASE}`, async close() { await stop(server); await relay.close(); } };
  };
  const scenario = {};
  results.scenarios.relay = scenario;

  // ---- a nothing-changed re-sync: 304 under load, against a bare node:http 304 --------------------------------
  {
    const clients = smoke ? 10 : 50;
    const ms = smoke ? 500 : 5_000;
    log(`relay: nothing-changed re-sync answered 304, ${clients} keep-alive clients for ${ms} ms, vs a bare node:http 304`);
    const api = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons: sizes.small } });
    const r = await startRelayOn(api);
    const head = await get(`${r.url}/relay/v1/feed?limit=1`);
    const feedUrl = `${r.url}/relay/v1/feed?since=${head.body.version}&handle=${head.body.handle}`;
    const ifNoneMatch = { 'if-none-match': head.headers.etag };
    const ours = await load(feedUrl, ifNoneMatch, clients, ms);
    await r.close();
    await api.close();
    const bare = await listen((req, res) => {
      res.writeHead(304, { etag: head.headers.etag, 'cache-control': 'no-cache' });
      res.end();
    });
    const floor = await load(`${bare.origin}/feed`, ifNoneMatch, clients, ms);
    await stop(bare.server);
    scenario.notModified = { clients, ms, ours, floor };
    log(`  relay ${Math.round(ours.rps)} req/s (p50 ${ours.p50.toFixed(2)} ms, p99 ${ours.p99.toFixed(2)} ms); bare ${Math.round(floor.rps)} req/s`);
    const ok = ours.wrong === 0 && ours.requests > 0;
    row({ figure: `relay 304 re-sync, ${clients} clients: requests/s`, ours: ours.rps, baseline: floor.rps, unit: 'req/s', ratio: ours.rps / floor.rps, budget: '≥ 0.25 × bare node:http', pass: ok && ours.rps >= 0.25 * floor.rps });
    row({ figure: `relay 304 re-sync, ${clients} clients: p50`, ours: ours.p50, baseline: floor.p50, unit: 'ms', ratio: ours.p50 / floor.p50, budget: '≤ 4 × bare', pass: ok && ours.p50 <= 4 * floor.p50 });
    row({ figure: `relay 304 re-sync, ${clients} clients: p99`, ours: ours.p99, baseline: floor.p99, unit: 'ms', ratio: ours.p99 / floor.p99, budget: '≤ 4 × bare', pass: ok && ours.p99 <= 4 * floor.p99 });
  }

  // ---- upstream list calls per refresh with 1, 5 and 20 tills ------------------------------------------------
  {
    const coupons = sizes.mid;
    const pages = Math.ceil(coupons / 100);
    scenario.listCalls = [];
    for (const tills of [1, 5, 20]) {
      log(`relay: upstream list calls of one refresh, ${coupons} coupons (${pages} pages), ${tills} till(s) re-syncing meanwhile`);
      const api = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons } });
      const r = await startRelayOn(api);
      const first = await get(`${r.url}/relay/v1/feed?limit=1`);
      const { version, handle } = first.body;
      const target = api.data.coupons[7];
      api.upsertCoupon({ ...target, name: `${target.name} (changed)` });
      api.resetRequests();
      // half the tills long-poll the feed for the change; the others re-list the API paths, as an old engine would
      const till = async (i) => {
        if (i % 2 === 0) {
          const answer = await get(`${r.url}/relay/v1/feed?since=${version}&handle=${handle}&wait=30`);
          return answer.status === 200 && answer.body.upserts.some((u) => u.key === String(target.coupon_code));
        }
        for (let page = 1; page <= pages; page++) {
          const answer = await get(`${r.url}/v2/shop/coupons?offset=${page}&limit=100`);
          if (answer.status !== 200) return false;
        }
        return true;
      };
      const [, ...seen] = await Promise.all([r.relay.refresh(), ...Array.from({ length: tills }, (_, i) => till(i))]);
      const calls = api.requests.filter((q) => q.path === '/v2/shop/coupons').length;
      scenario.listCalls.push({ tills, pages, calls, allSynced: seen.every(Boolean) });
      log(`  ${calls} list call(s) upstream for ${tills} till(s)`);
      row({ figure: `relay upstream list calls per refresh, ${tills} till${tills > 1 ? 's' : ''}`, ours: calls, baseline: pages, unit: 'calls', ratio: calls / pages, budget: '= 1 listing', pass: calls === pages && seen.every(Boolean) });
      await r.close();
      await api.close();
    }
  }

  // ---- memory of the relay holding the big coupon set -------------------------------------------------------
  {
    const coupons = sizes.big;
    log(`relay: memory holding ${coupons} coupons (heap with the relay, minus the heap once it is closed and released)`);
    const api = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons } });
    const rawBytes = Buffer.byteLength(JSON.stringify(api.data.coupons));
    gc();
    const rssBefore = process.memoryUsage().rss;
    const t0 = performance.now();
    let r = await startRelayOn(api);
    const listMs = performance.now() - t0;
    const status = await get(`${r.url}/relay/v1/status`);
    gc();
    const held = process.memoryUsage();
    await r.close();
    r = null;
    // (a turn of the event loop lets closed sockets and timers go; only then is the relay unreachable)
    await new Promise((resolve) => setTimeout(resolve, 100));
    gc();
    const released = process.memoryUsage();
    const heap = held.heapUsed - released.heapUsed;
    const rss = held.rss - rssBefore;
    scenario.memory = { coupons, rawBytes, heap, rss, listMs, version: status.body.version };
    log(`  heap ${(heap / 1e6).toFixed(1)} MB, RSS +${(rss / 1e6).toFixed(1)} MB, the coupons as JSON ${(rawBytes / 1e6).toFixed(1)} MB; first listing ${Math.round(listMs)} ms`);
    row({ figure: `relay heap holding ${coupons.toLocaleString('en-US')} coupons`, ours: heap / 1e6, baseline: rawBytes / 1e6, unit: 'MB', ratio: heap / rawBytes, budget: '≤ 3 × their JSON', pass: heap > 0 && heap <= 3 * rawBytes && status.body.version > 0 });
    row({ figure: '  (RSS growth while listing and holding them)', ours: rss / 1e6, baseline: rawBytes / 1e6, unit: 'MB', ratio: rss / rawBytes, budget: 'info', pass: true, info: true });
    row({ figure: '  (first listing through the relay, no rate limit)', ours: listMs, unit: 'ms', budget: 'info', pass: true, info: true });
    await api.close();
  }

  // ---- the relay as a deployed process: snapshot serving to many tills, fan-out to many long-polls ------------------
  await benchRelayProcess({ root, sizes, log, row, results, smoke });
}
