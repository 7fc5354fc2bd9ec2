// The bench's parts (bench/benchParts.mjs): one part that throws or hangs is a failed row that names it, and the
// parts after it still run, so `npm run bench` writes its table and JSON whatever one part does.
import { describe, expect, it } from 'vitest';
import { createParts, partFigure, type PartRow } from '../bench/benchParts.mjs';

function parts(boundS?: number) {
  const rows: PartRow[] = [];
  const p = createParts({ row: (r) => rows.push(r), log: () => undefined, ...(boundS ? { boundS } : {}) });
  return { p, rows };
}

describe('the bench, part by part', () => {
  it('names a part that throws in a failed row of its own and runs the next part', async () => {
    const { p, rows } = parts();
    await p.run('uses', async () => {
      throw new Error('timed out after 10000 ms waiting for a long-poll parked');
    });
    await p.run('engines', async () => {
      rows.push({ figure: 'engines: a row', ours: 1, unit: '', budget: 'info', pass: true });
    });
    expect(p.failed).toEqual(['uses']);
    expect(rows.map((r) => r.figure)).toEqual([partFigure('uses'), 'engines: a row']);
    expect(rows[0]).toMatchObject({ pass: false, note: 'timed out after 10000 ms waiting for a long-poll parked' });
    expect(Object.keys(p.seconds)).toEqual(['uses', 'engines']);
  });

  it("fails the running part with a rejection nothing awaited (a sampler's request), once, and goes on", async () => {
    const { p, rows } = parts();
    await p.run('relay', async () => {
      p.unhandled(
        new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) }),
      );
      p.unhandled(new Error('again'));
    });
    await p.run('hub', async () => undefined);
    expect(p.failed).toEqual(['relay']);
    expect(rows).toEqual([
      expect.objectContaining({ figure: partFigure('relay'), note: 'fetch failed (ECONNRESET socket hang up)' }),
    ]);
  });

  it('fails a part still running past its bound, and goes on', async () => {
    const { p, rows } = parts(0.05);
    let release: () => void = () => undefined;
    await p.run('hub', () => new Promise<void>((r) => (release = r)));
    await p.run('storefront', async () => undefined);
    release();
    expect(p.failed).toEqual(['hub']);
    expect(rows).toEqual([expect.objectContaining({ figure: partFigure('hub'), note: 'still running after 0.05 s' })]);
  });
});
