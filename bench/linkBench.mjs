// A till's first sync from a relay over a shop's link (`--only link`): the bench page opened through a shaped link
// (shapedLink.mjs: 20 Mbit/s each way, 40 ms round trip) that leads to the bench's server, the relay behind it
// compressing its snapshot chunks as the browser asks (Chromium: Accept-Encoding with br). Against its floor in
// the same run: the bytes the link carried for the sync at the link's bandwidth, plus the IndexedDB writes alone
// (bulkPut of the same records in the same worker). And the bytes moved against the snapshot's bytes uncompressed.
import { fetchBuffer } from './relayProcessBench.mjs';
import { startShapedLink } from './shapedLink.mjs';
import { median } from './stats.mjs';

const LINK = { mbps: 20, rttMs: 40 };

/**
 * The snapshot's bytes as it is (no Accept-Encoding): every chunk a till asks for, fetched on loopback, each on a
 * connection of its own (a pooled keep-alive socket the bench's server is closing just then fails the request: in a
 * full run, after the parts before, this read once ended the part with "fetch failed").
 */
async function plainSnapshotBytes(base) {
  let bytes = 0;
  let query = 'limit=10000';
  for (;;) {
    const answer = await fetchBuffer(`${base}/relay/v1/feed?${query}`, {
      agent: false,
      headers: { 'accept-encoding': 'identity' },
    });
    if (answer.status !== 200)
      throw new Error(`the relay answered ${answer.status}: ${answer.body.toString().slice(0, 200)}`);
    const text = answer.body.toString();
    bytes += answer.body.length;
    const body = JSON.parse(text);
    if (body.cursor === null) return bytes;
    query = `limit=10000&cursor=${body.cursor}&handle=${body.handle}`;
  }
}

/** @example await benchLink({ h, sizes, log, row, results }); */
export async function benchLink({ h, sizes, log, row, results }) {
  const big = sizes.big.toLocaleString('en-US');
  log(
    `a till's first sync of ${sizes.big} coupons from a relay over a ${LINK.mbps} Mbit/s, ${LINK.rttMs} ms link (${sizes.runs} run(s) after the version's first till)`,
  );
  h.mount('linkapi', { rateLimits: false, data: { coupons: sizes.big } });
  const relay = await h.mountRelay('link', 'linkapi');
  await relay.refresh();
  const plainBytes = await plainSnapshotBytes(`${h.origin}/relay/link`);
  // what the browser asked for and got, per feed request
  const codings = [];
  h.tapRelay('link', (req, res) => {
    if (!req.url?.includes('/relay/v1/feed')) return;
    const writeHead = res.writeHead.bind(res);
    res.writeHead = (status, headers) => {
      codings.push(`${req.headers['accept-encoding'] ?? '(none)'} → ${headers?.['content-encoding'] ?? 'identity'}`);
      return writeHead(status, headers);
    };
  });
  const link = await startShapedLink({ target: h.address, ...LINK });
  const runs = [];
  try {
    await h.navigate(link.origin);
    const options = {
      ...h.sessionOptions('linkapi', 'bench-ltill'),
      baseUrl: `${link.origin}/relay/link`,
      auth: undefined,
    };
    // the first till of the version compresses its chunks (once for every till after it): an info row
    for (let r = 0; r <= sizes.runs; r++) {
      await h.call('close', 'ltill');
      await h.call('deleteDatabase', 'bench-ltill');
      await h.call('prepare', 'ltill', options);
      const compressedBefore = (await relay.status()).chunksCompressed;
      link.reset();
      const first = await h.call('timedFirstSync', 'ltill');
      const moved = { down: link.bytes.down, up: link.bytes.up };
      const compressed = (await relay.status()).chunksCompressed - compressedBefore;
      await h.call('loadFloor', 'ltill');
      const writes = await h.call('putFloor', 'ltill');
      const floorMs = link.transferMs(moved.down) + writes.ms;
      runs.push({ first, moved, writes, floorMs, compressed });
      log(
        `  run ${r}: ${Math.round(first.ms)} ms (written ${first.report.written}), ${(moved.down / 1e6).toFixed(2)} MB down + ${(moved.up / 1e3).toFixed(1)} kB up (${((100 * (moved.down + moved.up)) / plainBytes).toFixed(1)} % of ${(plainBytes / 1e6).toFixed(1)} MB); floor ${Math.round(floorMs)} ms (link ${Math.round(link.transferMs(moved.down))} + writes ${Math.round(writes.ms)}): ${(first.ms / floorMs).toFixed(2)}×; ${compressed} chunk(s) compressed`,
      );
    }
    await h.call('close', 'ltill');
    await h.call('deleteDatabase', 'bench-ltill');
  } finally {
    h.tapRelay('link', null);
    await h.navigate(h.origin);
    await link.close();
  }
  log(`  the browser's feed requests: ${[...new Set(codings)].join('; ')}`);
  const [cold, ...warm] = runs;
  const ms = median(warm.map((x) => x.first.ms));
  const floorMs = median(warm.map((x) => x.floorMs));
  const ratio = median(warm.map((x) => x.first.ms / x.floorMs));
  const moved = median(warm.map((x) => x.moved.down + x.moved.up));
  const ok = runs.every((x) => x.first.report.ok && x.first.report.written === sizes.big);
  results.scenarios.link = { link: LINK, plainBytes, runs, codings: [...new Set(codings)] };
  const shaped = `${LINK.mbps} Mbit/s, ${LINK.rttMs} ms`;
  row({
    figure: `till via relay over a ${shaped} link: initial sync, ${big} coupons`,
    ours: ms,
    baseline: floorMs,
    unit: 'ms',
    ratio,
    budget: '≤ 1.3 × (bytes ÷ bandwidth + IndexedDB writes alone)',
    pass: ok && ratio <= 1.3,
  });
  row({
    figure: `  (the version's first till, which compresses the chunks)`,
    ours: cold.first.ms,
    baseline: cold.floorMs,
    unit: 'ms',
    ratio: cold.first.ms / cold.floorMs,
    budget: 'info',
    pass: true,
    info: true,
  });
  row({
    figure: `till via relay over a ${shaped} link: bytes moved`,
    ours: moved / 1e6,
    baseline: plainBytes / 1e6,
    unit: 'MB',
    ratio: moved / plainBytes,
    budget: '≤ 0.15 × the snapshot uncompressed',
    pass: ok && moved <= 0.15 * plainBytes,
  });
}
