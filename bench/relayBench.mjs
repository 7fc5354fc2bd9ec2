// The relay's figures (issue 10 "Measure"), on loopback in this Node process: a nothing-changed re-sync answered
// 304 under load against a bare node:http server answering a fixed 304 (same load, same run); upstream list calls
// per refresh with 1, 5 and 20 tills; the relay's memory holding the big coupon set (its RSS in a process of its
// own: relayMemoryChild.mjs); (issue 25, item 11) a till's lookup and the relay's listing while 20 clients flood
// it, against the same relay unloaded in the same run; and (issue 33, item 3) a till's upstream read, with its token,
// while 1,000 anonymous addresses (each its own network) flood the relay with made-up coupon codes, against the same
// relay unloaded.
import { execFile } from 'node:child_process';
import { Agent, createServer, request } from 'node:http';
import { promisify } from 'node:util';
import { runnerImport } from 'vite';
import { benchRelayProcess } from './relayProcessBench.mjs';
import { median, quantile } from './stats.mjs';

const BASE = '/shop-api';

/** A node:http server on a free loopback port. @example const { server, origin } = await listen(handler); */
export function listen(handler) {
  const server = createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` })),
  );
}
/** Closes it, its open connections too. */
export function stop(server) {
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
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** What a flooding client asks for: alternately a made-up coupon code and the options of a product nobody tracks. */
const madeUpReads = (address, n) =>
  n % 2 === 0 ? `/v2/shop/coupons/MADE-UP-${address}-${n}` : `/v2/shop/products/${900_000 + n}/options`;

/**
 * A client on its own loopback address (127.x.y.z: the relay tells clients apart by address) that keeps `inFlight`
 * requests open, each asking for what the snapshot cannot answer (`pathOf`: by default a made-up coupon code, or the
 * options of a product nobody tracks). A 429 makes it pause 100 ms (it ignores Retry-After). Returns stop(), which
 * resolves with its counts once its requests under way are answered.
 */
function flood(origin, address, inFlight, pathOf = madeUpReads) {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight, localAddress: address });
  let running = true;
  let n = 0;
  const counts = { answered: 0, refused: 0 };
  const one = () =>
    new Promise((resolve) => {
      n++;
      const path = pathOf(address, n);
      const req = request(`${origin}${BASE}${path}`, { agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 429) counts.refused++;
          else counts.answered++;
          resolve(res.statusCode === 429 ? 100 : 0);
        });
      });
      req.on('error', () => resolve(100));
      req.end();
    });
  const loops = Array.from({ length: inFlight }, async () => {
    while (running) {
      const pause = await one();
      if (pause > 0 && running) await new Promise((r) => setTimeout(r, pause));
    }
  });
  return async () => {
    running = false;
    await Promise.all(loops);
    agent.destroy();
    return counts;
  };
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
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) await one();
    }),
  );
  const elapsed = performance.now() - started;
  agent.destroy();
  return {
    rps: latencies.length / (elapsed / 1000),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    requests: latencies.length,
    wrong,
  };
}

/**
 * Runs the relay scenarios and adds their rows.
 * @example await benchRelay({ root, sizes, log, row, results });
 */
export async function benchRelay({ root, sizes, log, row, results, smoke }) {
  const { module: mockServer } = await runnerImport(`${root}packages/mock-server/src/index.ts`);
  const { module: relayEntry } = await runnerImport(`${root}packages/relay/src/index.ts`);
  const startRelayOn = async (api, extra = {}) => {
    const relay = relayEntry.createShopRelay({
      key: 'demo-key',
      secret: 'demo-secret',
      target: api.url,
      basePath: BASE,
      public: true,
      rateLimits: false,
      clientLimits: false,
      ...extra,
    });
    const { server, origin } = await listen((req, res) => relay(req, res));
    await relay.ready;
    await relay.refresh();
    return {
      relay,
      server,
      url: `${origin}${BASE}`,
      async close() {
        await stop(server);
        await relay.close();
      },
    };
  };
  const scenario = {};
  results.scenarios.relay = scenario;

  // ---- a nothing-changed re-sync: 304 under load, against a bare node:http 304 --------------------------------
  {
    const clients = smoke ? 10 : 50;
    const ms = smoke ? 500 : 5_000;
    log(
      `relay: nothing-changed re-sync answered 304, ${clients} keep-alive clients for ${ms} ms, vs a bare node:http 304`,
    );
    const api = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons: sizes.small } });
    const r = await startRelayOn(api);
    const head = await get(`${r.url}/relay/v1/feed?limit=1`);
    const feedUrl = `${r.url}/relay/v1/feed?since=${head.body.version}&handle=${head.body.handle}`;
    const ifNoneMatch = { 'if-none-match': head.headers.etag };
    const ours = await load(feedUrl, ifNoneMatch, clients, ms);
    await r.close();
    await api.close();
    const bare = await listen((_req, res) => {
      res.writeHead(304, { etag: head.headers.etag, 'cache-control': 'no-cache' });
      res.end();
    });
    const floor = await load(`${bare.origin}/feed`, ifNoneMatch, clients, ms);
    await stop(bare.server);
    scenario.notModified = { clients, ms, ours, floor };
    log(
      `  relay ${Math.round(ours.rps)} req/s (p50 ${ours.p50.toFixed(2)} ms, p99 ${ours.p99.toFixed(2)} ms); bare ${Math.round(floor.rps)} req/s`,
    );
    const ok = ours.wrong === 0 && ours.requests > 0;
    row({
      figure: `relay 304 re-sync, ${clients} clients: requests/s`,
      ours: ours.rps,
      baseline: floor.rps,
      unit: 'req/s',
      ratio: ours.rps / floor.rps,
      budget: '≥ 0.25 × bare node:http',
      pass: ok && ours.rps >= 0.25 * floor.rps,
    });
    row({
      figure: `relay 304 re-sync, ${clients} clients: p50`,
      ours: ours.p50,
      baseline: floor.p50,
      unit: 'ms',
      ratio: ours.p50 / floor.p50,
      budget: '≤ 4 × bare',
      pass: ok && ours.p50 <= 4 * floor.p50,
    });
    row({
      figure: `relay 304 re-sync, ${clients} clients: p99`,
      ours: ours.p99,
      baseline: floor.p99,
      unit: 'ms',
      ratio: ours.p99 / floor.p99,
      budget: '≤ 4 × bare',
      pass: ok && ours.p99 <= 4 * floor.p99,
    });
  }

  // ---- upstream list calls per refresh with 1, 5 and 20 tills ------------------------------------------------
  {
    const coupons = sizes.mid;
    const pages = Math.ceil(coupons / 100);
    scenario.listCalls = [];
    for (const tills of [1, 5, 20]) {
      log(
        `relay: upstream list calls of one refresh, ${coupons} coupons (${pages} pages), ${tills} till(s) re-syncing meanwhile`,
      );
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
      row({
        figure: `relay upstream list calls per refresh, ${tills} till${tills > 1 ? 's' : ''}`,
        ours: calls,
        baseline: pages,
        unit: 'calls',
        ratio: calls / pages,
        budget: '= 1 listing',
        pass: calls === pages && seen.every(Boolean),
      });
      await r.close();
      await api.close();
    }
  }

  // ---- a fair share under attack: a till's lookup and the listing while 20 clients flood, vs unloaded -------------
  {
    const coupons = smoke ? 300 : 500;
    const attackers = 20;
    const products = [mockServer.MOCK_CODES.firstProductNo, mockServer.MOCK_CODES.firstProductNo + 1];
    const calls = Math.ceil(coupons / 100) + products.length;
    log(
      `relay: a till's lookup and a listing (${calls} list calls) with ${attackers} clients flooding it with made-up reads, the API's real limits`,
    );
    const api = await mockServer.startMockShopApi({ data: { coupons } }); // rate limits on: list 1/s, other 5/s
    const relay = relayEntry.createShopRelay({
      key: 'demo-key',
      secret: 'demo-secret',
      target: api.url,
      basePath: BASE,
      public: true,
      products,
      itemCacheMs: 0,
      refreshIntervalMs: 24 * 60 * 60 * 1000,
    });
    const { server, origin } = await listen((req, res) => relay(req, res));
    const listed = async () => {
      const status = await relay.status();
      return products.every((p) => status.confirmedAt[`options:${p}`] > 0) && status.confirmedAt.coupons > 0;
    };
    // unloaded: the first listing (started with the relay), then three lookups of one coupon by a till
    let t = performance.now();
    await relay.ready;
    while (!(await listed())) await new Promise((r) => setTimeout(r, 20));
    const listingBase = performance.now() - t;
    const tillAgent = new Agent({ keepAlive: true, localAddress: '127.0.0.1' });
    const lookup = async () => {
      const t0 = performance.now();
      const answer = await get(`${origin}${BASE}/v2/shop/coupons/WELCOME10`, {}, tillAgent);
      return {
        ms: performance.now() - t0,
        ok: answer.status === 200 && answer.body?.data?.coupon_code === 'WELCOME10',
      };
    };
    const lookupsBase = [];
    for (let i = 0; i < 3; i++) lookupsBase.push(await lookup());
    // loaded: 20 clients flood, each from a network of its own (the relay counts an address as its /24, and the
    // till is 127.0.0.1); the relay lists again while a till looks a coupon up now and then
    const stops = Array.from({ length: attackers }, (_, i) => flood(origin, `127.${i + 2}.0.1`, 4));
    // (a round of the attack: each attacker has been served and keeps its queue full)
    await new Promise((r) => setTimeout(r, smoke ? 2_000 : 4_000));
    t = performance.now();
    const listing = relay.refresh().then(() => performance.now() - t);
    const lookupsLoaded = [];
    for (let i = 0; i < 3; i++) {
      // a till asks now and then (a customer at a time): less often than once a round of the 20 attackers (4 s)
      if (i > 0) await new Promise((r) => setTimeout(r, smoke ? 2_000 : 5_000));
      lookupsLoaded.push(await lookup());
    }
    const listingLoaded = await listing;
    const counts = await Promise.all(stops.map((stop) => stop()));
    tillAgent.destroy();
    const throttled = api.requests.filter((q) => q.throttled).map((q) => q.path);
    await stop(server);
    await relay.close();
    await api.close();
    const base = median(lookupsBase.map((l) => l.ms));
    const worst = Math.max(...lookupsLoaded.map((l) => l.ms));
    const answered = counts.reduce((n, c) => n + c.answered, 0);
    const refused = counts.reduce((n, c) => n + c.refused, 0);
    scenario.underAttack = {
      coupons,
      calls,
      attackers,
      listingBase,
      listingLoaded,
      lookupsBase,
      lookupsLoaded,
      answered,
      refused,
      throttled,
    };
    log(
      `  listing ${Math.round(listingLoaded)} ms under attack vs ${Math.round(listingBase)} ms unloaded; till lookup worst ${Math.round(worst)} ms vs ${base.toFixed(1)} ms; attackers answered ${answered}, refused 429 ${refused}; upstream throttled ${throttled.length}`,
    );
    const ok = lookupsLoaded.every((l) => l.ok) && lookupsBase.every((l) => l.ok);
    row({
      figure: `relay, ${attackers} clients flooding: a till's coupon lookup (worst of 3)`,
      ours: worst,
      baseline: base,
      unit: 'ms',
      ratio: worst / base,
      budget: '≤ 2000 ms',
      pass: ok && worst <= 2000,
    });
    row({
      figure: `relay, ${attackers} clients flooding: a listing of ${calls} list calls`,
      ours: listingLoaded,
      baseline: listingBase,
      unit: 'ms',
      ratio: listingLoaded / listingBase,
      budget: '≤ 2 × unloaded',
      pass: listingLoaded <= 2 * listingBase,
    });
  }

  // ---- tills first: a till's upstream read while 1,000 anonymous addresses flood, vs unloaded
  // -------------------------
  {
    const addresses = smoke ? 200 : 1_000;
    const token = 'bench-till-token-front-1';
    const storefront = ['productOptions', 'productOption', 'coupon'];
    const tokenOf = (req) => req.headers.authorization === `Bearer ${token}`;
    log(
      `relay: a till's upstream read (an issued coupon, with its token) while ${addresses} anonymous addresses, each its own network, flood made-up coupon codes; the API's real limits`,
    );
    const api = await mockServer.startMockShopApi({ data: { coupons: 100 } }); // rate limits on: list 1/s, other 5/s
    const relay = relayEntry.createShopRelay({
      key: 'demo-key',
      secret: 'demo-secret',
      target: api.url,
      basePath: BASE,
      itemCacheMs: 0,
      refreshIntervalMs: 24 * 60 * 60 * 1000,
      // the relay command's rule: the storefront routes open to everybody, the rest to tills with their token
      authorize: (req, route) => storefront.includes(route) || tokenOf(req),
      clientId: (req) => (tokenOf(req) ? { id: 'till:front-1', identified: true } : req.socket.remoteAddress),
    });
    const { server, origin } = await listen((req, res) => relay(req, res));
    await relay.ready;
    await relay.refresh();
    const tillAgent = new Agent({ keepAlive: true, localAddress: '127.0.0.1' });
    const read = async () => {
      const t0 = performance.now();
      const answer = await get(
        `${origin}${BASE}/v2/shop/issue-coupons/${mockServer.MOCK_CODES.issuedUnused}`,
        { authorization: `Bearer ${token}` },
        tillAgent,
      );
      return { ms: performance.now() - t0, ok: answer.status === 200 && answer.body?.data?.coupon_code !== undefined };
    };
    const readsBase = [];
    for (let i = 0; i < 3; i++) readsBase.push(await read());
    // each address its own /24 (127.a.b.1): grouping by network does not fold them into one client
    const madeUpCodes = (address, n) => `/v2/shop/coupons/MADE-UP-${address}-${n}`;
    const stops = Array.from({ length: addresses }, (_, i) =>
      flood(origin, `127.${1 + (i >> 8)}.${i & 255}.1`, 1, madeUpCodes),
    );
    let waiting = 0;
    for (let tries = 0; tries < 300 && waiting < 0.9 * addresses; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      waiting = (await relay.status()).upstreamWaiting;
    }
    const readsLoaded = [];
    for (let i = 0; i < 3; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 1_000));
      readsLoaded.push(await read());
    }
    const queued = (await relay.status()).upstreamWaiting;
    const stopping = stops.map((stop) => stop());
    tillAgent.destroy();
    await relay.close(); // answers every read still waiting for its turn
    const counts = await Promise.all(stopping);
    await stop(server);
    await api.close();
    const base = median(readsBase.map((r) => r.ms));
    const worst = Math.max(...readsLoaded.map((r) => r.ms));
    const answered = counts.reduce((n, c) => n + c.answered, 0);
    scenario.tillsFirst = { addresses, readsBase, readsLoaded, waitingBefore: waiting, waitingAfter: queued, answered };
    log(
      `  till's read worst ${Math.round(worst)} ms under the flood vs ${base.toFixed(1)} ms unloaded; anonymous reads waiting for the API: ${waiting} when the till asked, ${queued} after its reads`,
    );
    const ok = readsLoaded.every((r) => r.ok) && readsBase.every((r) => r.ok) && waiting >= 0.9 * addresses;
    row({
      figure: `relay, ${addresses} anonymous addresses flooding: a till's upstream read (worst of 3)`,
      ours: worst,
      baseline: base,
      unit: 'ms',
      ratio: worst / base,
      budget: '≤ 2000 ms',
      pass: ok && worst <= 2000,
    });
  }

  // ---- memory of the relay holding the big coupon set -------------------------------------------------------
  {
    const coupons = sizes.big;
    log(
      `relay: memory holding ${coupons} coupons (a relay process of its own: RSS from a baseline after warm-up; heap with the relay minus heap once it is released)`,
    );
    const api = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons } });
    const warmUp = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons: 100 } });
    const rawBytes = Buffer.byteLength(JSON.stringify(api.data.coupons));
    // RSS only means something in a process of its own: in this one, what the scenarios before allocated goes
    // back to the system meanwhile (a run once printed an RSS growth of −82 MB)
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        `${root}bench/relayMemoryChild.mjs`,
        JSON.stringify({ target: api.url, warmTarget: warmUp.url }),
      ],
      { cwd: root, maxBuffer: 1 << 20 },
    );
    await warmUp.close();
    const { rss, heap, listMs, version } = JSON.parse(stdout.trim().split('\n').at(-1));
    scenario.memory = { coupons, rawBytes, heap, rss, listMs, version };
    log(
      `  heap ${(heap / 1e6).toFixed(1)} MB, RSS +${(rss / 1e6).toFixed(1)} MB, the coupons as JSON ${(rawBytes / 1e6).toFixed(1)} MB; first listing ${Math.round(listMs)} ms`,
    );
    row({
      figure: `relay heap holding ${coupons.toLocaleString('en-US')} coupons`,
      ours: heap / 1e6,
      baseline: rawBytes / 1e6,
      unit: 'MB',
      ratio: heap / rawBytes,
      budget: '≤ 3 × their JSON',
      pass: heap > 0 && heap <= 3 * rawBytes && version > 0,
    });
    // at smoke sizes the growth is within the noise of V8's and malloc's page handling (a few MB either way)
    row({
      figure: '  (RSS growth of the relay process while listing and holding them)',
      ours: rss / 1e6,
      baseline: rawBytes / 1e6,
      unit: 'MB',
      ratio: rss / rawBytes,
      budget: 'info',
      pass: true,
      info: true,
    });
    row({
      figure: '  (first listing through the relay, no rate limit)',
      ours: listMs,
      unit: 'ms',
      budget: 'info',
      pass: true,
      info: true,
    });
    await api.close();
  }

  // ---- the relay as a deployed process: snapshot serving to many tills, fan-out to many long-polls ------------------
  await benchRelayProcess({ root, sizes, log, row, results, smoke });
}
