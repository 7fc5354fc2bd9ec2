// The storefront bench's measuring side, in a process of its own (started by storefrontBench.mjs, in plain Node, on
// the package as built: `built` is where). Prints one JSON line: the first-visit runs and the anonymous reads.
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { listen, stop } from './relayBench.mjs';
import { startShapedLink } from './shapedLink.mjs';
import { median } from './stats.mjs';

const { sizes, smoke, built } = JSON.parse(process.argv[2]);
const { startMockShopApi } = await import(`${built}mock-server/index.js`);
const { createMemoryStore, createShopRelay } = await import(`${built}relay/index.js`);
const { createShopLookup } = await import(`${built}web/index.js`);
const mockServer = { startMockShopApi };
const relayEntry = { createMemoryStore, createShopRelay };
const lib = { createShopLookup };
const log = (m) => process.stderr.write(`${m}\n`);
const results = { scenarios: {} };
const rows = [];
const row = (r) => rows.push(r);

const BASE = '/shop-api';
const PRODUCTS = Array.from({ length: 20 }, (_, i) => 13801 + i);
const UNTRACKED = 13830;
/** A shopper's phone on a slow mobile link (the shaped link: shapedLink.mjs). */
const SLOW_LINK = { mbps: 1.6, rttMs: 150 };
const storefrontRoutes = ['productOptions', 'productOption', 'coupon'];

/** The storefront's first productOptions answer confirmed by the relay. */
function firstOptions(lookup) {
  return new Promise((resolve) => {
    const sub = lookup.productOptions(PRODUCTS[4]).subscribe((v) => {
      if (v.syncedAt !== null && v.data.length > 0) {
        queueMicrotask(() => sub.unsubscribe());
        resolve(v);
      }
    });
  });
}

/** Resolves once the storefront's start is over (its start sync done). */
function visitEnded(lookup) {
  return new Promise((resolve) => {
    const sub = lookup.status().subscribe((st) => {
      if (st.phase === 'idle' && st.lastSyncedAt.options !== null) {
        queueMicrotask(() => sub.unsubscribe());
        resolve();
      }
    });
  });
}

/** A fetch that counts the bytes of every answer body it reads. */
function countingFetch() {
  const counter = { bytes: 0, requests: 0 };
  const f = async (input, init) => {
    const res = await fetch(input, init);
    counter.requests++;
    const body = await res.arrayBuffer();
    counter.bytes += body.byteLength;
    return new Response(res.status === 304 ? null : body, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
  return { fetch: f, counter };
}

const scenario = {};
results.scenarios.storefront = scenario;

// ---- first visit: a storefront vs a till's full sync, on one relay (the storefront authorize on a second door) ---
{
  const coupons = sizes.big;
  log(
    `storefront: first visit on a relay (${coupons} coupons, ${PRODUCTS.length} tracked products) vs a till's full sync (${sizes.runs} run(s))`,
  );
  const api = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons, products: 40 } });
  const store = relayEntry.createMemoryStore();
  const common = {
    key: 'demo-key',
    secret: 'demo-secret',
    target: api.url,
    basePath: BASE,
    rateLimits: false,
    clientLimits: false,
    store,
  };
  const tillRelay = relayEntry.createShopRelay({ ...common, public: true, products: PRODUCTS });
  const shopRelay = relayEntry.createShopRelay({
    ...common,
    authorize: (_req, route) => storefrontRoutes.includes(route),
  });
  const till = await listen((req, res) => tillRelay(req, res));
  const shop = await listen((req, res) => shopRelay(req, res));
  await tillRelay.ready;
  await tillRelay.refresh();
  await shopRelay.ready;
  const link = await startShapedLink({ target: { host: '127.0.0.1', port: shop.server.address().port }, ...SLOW_LINK });
  const runs = [];
  for (let r = 0; r < sizes.runs; r++) {
    const open = (origin, options) => {
      const c = countingFetch();
      const started = performance.now();
      const lookup = lib.createShopLookup({
        baseUrl: `${origin}${BASE}`,
        worker: false,
        indexedDB: new IDBFactory(),
        IDBKeyRange,
        fetch: c.fetch,
        rateLimits: false,
        dbName: `bench-${r}`,
        ...options,
      });
      return { lookup, c, started };
    };
    // the till: its full sync (every coupon and the tracked products' options)
    const t = open(till.origin, { products: PRODUCTS });
    const tillReport = await t.lookup.sync();
    const tillMs = performance.now() - t.started;
    await t.lookup.close();
    // one product read through the storefront's relay (answered from the snapshot)
    const readStart = performance.now();
    const read = await fetch(`${shop.origin}${BASE}/v2/shop/products/${PRODUCTS[4]}/options`);
    const readBytes = (await read.arrayBuffer()).byteLength;
    const readMs = performance.now() - readStart;
    // the storefront: from createShopLookup to the first productOptions answer confirmed by the relay
    const s = open(shop.origin, { products: [PRODUCTS[4]], coupons: 'byCode' });
    const first = await firstOptions(s.lookup);
    const shopMs = performance.now() - s.started;
    // the visit's bytes: everything its start asked for (discovery and the start sync too), not only the first answer
    await visitEnded(s.lookup);
    const shopBytes = s.c.counter.bytes;
    await s.lookup.close();
    // the same first visit over a slow link: against one request's round trips (a new connection: its handshake
    // and the request) and the bytes the link carried by then at its bandwidth
    link.reset();
    const slow = open(link.origin, { products: [PRODUCTS[4]], coupons: 'byCode', dbName: `bench-slow-${r}` });
    await firstOptions(slow.lookup);
    const slowMs = performance.now() - slow.started;
    const slowBytes = { ...link.bytes };
    const slowFloorMs = 2 * SLOW_LINK.rttMs + link.transferMs(slowBytes.up) + link.transferMs(slowBytes.down);
    await visitEnded(slow.lookup);
    await slow.lookup.close();
    runs.push({
      tillMs,
      tillBytes: t.c.counter.bytes,
      tillOk: tillReport.ok,
      readMs,
      readBytes,
      shopMs,
      shopBytes,
      options: first.data.length,
      slowMs,
      slowBytes,
      slowFloorMs,
    });
    log(
      `  run ${r + 1}: till ${Math.round(tillMs)} ms, ${(t.c.counter.bytes / 1e6).toFixed(2)} MB (${t.c.counter.requests} requests); storefront ${shopMs.toFixed(1)} ms, ${shopBytes} B (${s.c.counter.requests} requests); one product read ${readMs.toFixed(1)} ms; over ${SLOW_LINK.mbps} Mbit/s, ${SLOW_LINK.rttMs} ms: ${Math.round(slowMs)} ms (${slowBytes.up} B up, ${slowBytes.down} B down by then; floor ${Math.round(slowFloorMs)} ms)`,
    );
  }
  await link.close();
  await stop(till.server);
  await stop(shop.server);
  await tillRelay.close();
  await shopRelay.close();
  await api.close();
  const tillBytes = median(runs.map((x) => x.tillBytes));
  const shopBytes = median(runs.map((x) => x.shopBytes));
  const shopMs = median(runs.map((x) => x.shopMs));
  const readMs = median(runs.map((x) => x.readMs));
  scenario.firstVisit = { coupons, products: PRODUCTS.length, runs };
  row({
    figure: `storefront first visit on a relay (${coupons.toLocaleString('en-US')} coupons): bytes`,
    ours: shopBytes / 1000,
    baseline: tillBytes / 1000,
    unit: 'kB',
    ratio: shopBytes / tillBytes,
    budget: "< 1 % of the till's full sync",
    pass: shopBytes < 0.01 * tillBytes && runs.every((x) => x.tillOk),
  });
  row({
    figure: 'storefront first visit: createShopLookup → first productOptions answer',
    ours: shopMs,
    baseline: readMs,
    unit: 'ms',
    ratio: shopMs / readMs,
    budget: '≤ 1.5 × a single product read',
    pass: shopMs <= 1.5 * readMs,
    note: 'engine as built, in Node (worker: false, fake-indexeddb): its whole start is counted, the read is one fetch',
  });
  const slowMs = median(runs.map((x) => x.slowMs));
  const slowRatio = median(runs.map((x) => x.slowMs / x.slowFloorMs));
  scenario.firstVisit.slowLink = SLOW_LINK;
  row({
    figure: `storefront first visit over a ${SLOW_LINK.mbps} Mbit/s, ${SLOW_LINK.rttMs} ms link: first productOptions answer`,
    ours: slowMs,
    baseline: median(runs.map((x) => x.slowFloorMs)),
    unit: 'ms',
    ratio: slowRatio,
    budget: '≤ 1.25 × (2 round trips + bytes ÷ bandwidth)',
    pass: slowRatio <= 1.25,
  });
}

// ---- 1,000 concurrent anonymous reads of one untracked product ------------------------------------------------
{
  const n = smoke ? 100 : 1_000;
  log(`storefront: ${n} concurrent anonymous reads of one untracked product through one relay`);
  const api = await mockServer.startMockShopApi({ rateLimits: false, data: { coupons: sizes.small, products: 40 } });
  const relay = relayEntry.createShopRelay({
    key: 'demo-key',
    secret: 'demo-secret',
    target: api.url,
    basePath: BASE,
    rateLimits: false,
    authorize: (_req, route) => storefrontRoutes.includes(route),
    clientId: (req) => String(req.headers['x-shopper']), // a thousand shoppers, as a trusted balancer would name them
  });
  const { server, origin } = await listen((req, res) => relay(req, res));
  await relay.ready;
  await relay.refresh();
  const path = `/v2/shop/products/${UNTRACKED}/options`;
  api.resetRequests();
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      fetch(`${origin}${BASE}${path}`, { headers: { 'x-shopper': `s${i}` } }).then((r) => r.status),
    ),
  );
  const ms = performance.now() - started;
  const upstream = api.requests.filter((q) => q.path === path).length;
  await stop(server);
  await relay.close();
  await api.close();
  scenario.anonymousReads = { n, upstream, ms, ok: answers.filter((s) => s === 200).length };
  log(
    `  ${upstream} upstream call(s), ${answers.filter((s) => s === 200).length}/${n} answered 200 in ${Math.round(ms)} ms`,
  );
  row({
    figure: `${n.toLocaleString('en-US')} concurrent anonymous reads of one untracked product: upstream calls`,
    ours: upstream,
    unit: '',
    budget: '1 per refresh window (itemCacheMs 2 s)',
    pass: upstream === 1 && answers.every((s) => s === 200),
  });
}

process.stdout.write(`${JSON.stringify({ rows, scenario })}\n`);
process.exit(0);
