// Which content coding a client asked for (RFC 9110 §12.5.3): br or gzip as its Accept-Encoding weighs them
// (q-values, `*` for any coding it did not name, q=0 for "not this one"), identity when it names neither or sends no
// Accept-Encoding at all (the usual reading: a client that says nothing gets the body as it is).

/** The codings the relay and the proxy answer with. */
export type ContentCoding = 'br' | 'gzip';

/** One `coding;q=x` of the header, its name lower-cased; q from 0 to 1 (1 when absent or unreadable). */
function weights(header: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/.exec(p);
      if (m) q = Math.min(1, Math.max(0, Number(m[1]) || 0));
    }
    // a coding named twice counts at its highest weight
    out.set(name, Math.max(q, out.get(name) ?? 0));
  }
  return out;
}

/**
 * The coding to answer `header` with, or null for identity. Between br and gzip of equal weight, br (smaller);
 * `x-gzip` counts as gzip; an explicit `identity` weighed above both wins.
 * @example chooseEncoding('gzip, deflate, br;q=0.9') // 'gzip'
 * @example chooseEncoding('br;q=0, *') // 'gzip'
 */
export function chooseEncoding(header: string | undefined): ContentCoding | null {
  if (header === undefined || header.trim() === '') return null;
  const w = weights(header);
  const any = w.get('*');
  const of = (...names: string[]): number => {
    const named = names.map((n) => w.get(n)).filter((q): q is number => q !== undefined);
    return named.length > 0 ? Math.max(...named) : (any ?? 0);
  };
  const br = of('br');
  const gzip = of('gzip', 'x-gzip');
  const best: ContentCoding = br >= gzip ? 'br' : 'gzip';
  const q = Math.max(br, gzip);
  if (q <= 0) return null;
  const identity = w.get('identity');
  return identity !== undefined && identity > q ? null : best;
}
