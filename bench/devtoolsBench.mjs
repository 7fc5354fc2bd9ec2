// `--only devtools`: the devtools panel open on a till with the big data set (100,000 coupons at full sizes) against
// the same till with it closed: keyed coupon(code) lookups, blocks with and without the panel in turn (each round
// changes which goes first), fresh random codes each block; the p99 of each, the median over the rounds.
import { median, quantile, sample } from './stats.mjs';

/**
 * @param {{ h: object, sizes: object, log: Function, row: Function, results: object, randomOf: Function,
 *   codes: string[], bigOptions: object, synced: boolean }} ctx `synced`: the big session's database already holds
 *   the big data set (another part of this run synced it)
 */
export async function benchDevtools({ h, sizes, log, row, results, randomOf, codes, bigOptions, synced }) {
  const { call } = h;
  log(`devtools open vs closed: ${sizes.lookups} × coupon(code) per block, ${sizes.runs} round(s)`);
  await call('close', 'big');
  await call('prepare', 'big', bigOptions);
  if (synced) await call('startOnly', 'big');
  else await call('timedFirstSync', 'big');
  // warm-up, closed and open: JIT, IndexedDB caches, the panel's chunk
  await call('keyedLookups', 'big', 'coupon', sample(codes, sizes.warmup, randomOf), false);
  const mounted = await call('mountDevtools', 'big');
  await call('keyedLookups', 'big', 'coupon', sample(codes, sizes.warmup, randomOf), false);
  await call('unmountDevtools', 'big');
  const rounds = [];
  for (let r = 0; r < sizes.runs; r++) {
    const block = async (open) => {
      if (open) await call('mountDevtools', 'big');
      const out = await call('keyedLookups', 'big', 'coupon', sample(codes, sizes.lookups, randomOf), false);
      if (open) await call('unmountDevtools', 'big');
      return out;
    };
    const [first, second] = r % 2 === 0 ? [false, true] : [true, false];
    const a = await block(first);
    const b = await block(second);
    const [closed, open] = first ? [b, a] : [a, b];
    rounds.push({
      closedP99: quantile(closed.ms, 0.99),
      openP99: quantile(open.ms, 0.99),
      found: closed.found + open.found,
    });
    log(
      `  round ${r + 1}: p99 closed ${rounds.at(-1).closedP99.toFixed(2)} ms, open ${rounds.at(-1).openP99.toFixed(2)} ms`,
    );
  }
  await call('close', 'big');
  const closedP99 = median(rounds.map((x) => x.closedP99));
  const openP99 = median(rounds.map((x) => x.openP99));
  const allFound = rounds.every((x) => x.found === 2 * sizes.lookups);
  results.scenarios.devtools = { mounted, rounds };
  row({
    figure: `coupon(code) with the devtools open, ${sizes.big.toLocaleString('en-US')} stored: p99`,
    ours: openP99,
    baseline: closedP99,
    unit: 'ms',
    ratio: openP99 / closedP99,
    budget: '≤ 1.2 × closed p99',
    pass: allFound && mounted.coupons === sizes.big && openP99 <= 1.2 * closedP99,
  });
}
