// Small statistics and the result table of `npm run bench`.

/** The q-quantile (0..1) of `values` (nearest rank). @example quantile([3, 1, 2], 0.5) // 2 */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export const median = (values) => quantile(values, 0.5);

/** A seeded PRNG (mulberry32), so every run looks up the same "random" keys. */
export function createRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` distinct items of `list`, picked with `random`. */
export function sample(list, count, random) {
  const picked = new Set();
  const n = Math.min(count, list.length);
  while (picked.size < n) picked.add(Math.floor(random() * list.length));
  return [...picked].map((i) => list[i]);
}

const fmt = (v, unit) => {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (typeof v === 'string') return v;
  if (unit === 'ms') return `${v < 10 ? v.toFixed(2) : v < 1000 ? v.toFixed(1) : Math.round(v)} ms`;
  if (unit === 'rec/s') return `${Math.round(v).toLocaleString('en-US')} rec/s`;
  if (unit === 'kB') return `${v.toFixed(1)} kB`;
  if (unit === 'MB') return `${v.toFixed(2)} MB`;
  return `${Number.isInteger(v) ? v : v.toFixed(2)}${unit ? ` ${unit}` : ''}`;
};

/** The table: figure | ours | baseline | ratio | budget | result. */
export function formatTable(rows) {
  const cells = rows.map((r) => [
    r.figure,
    fmt(r.ours, r.unit),
    r.baseline === null || r.baseline === undefined ? '' : fmt(r.baseline, r.baselineUnit ?? r.unit),
    r.ratio === null || r.ratio === undefined || Number.isNaN(r.ratio) ? '' : `${r.ratio.toFixed(2)}×`,
    r.budget,
    r.info ? 'info' : r.pass ? 'pass' : 'FAIL',
  ]);
  const head = ['figure', 'ours', 'baseline', 'ratio', 'budget', 'result'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => `| ${c.map((x, i) => x.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}
