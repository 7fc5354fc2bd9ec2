// What a complete listing proves about the records it did not name: listingEnd's table row by row, and the GETs
// that confirm them (a refusal is no answer about a record; a failure that can heal is thrown).
import { describe, expect, it } from 'vitest';
import { ShopLookupError } from '../src/errors';
import type { ItemAnswer } from '../src/api/apiClient';
import {
  askUnlisted,
  emptyAnswers,
  listingEnd,
  type ListingEndFacts,
  type UnlistedAnswer,
} from '../src/api/unlistedRecords';

describe('unlistedRecords', () => {
  const facts = (f: Partial<ListingEndFacts> & { answered?: Record<string, UnlistedAnswer> }): ListingEndFacts => ({
    unlisted: [],
    suspects: new Set(),
    answers: new Map(Object.entries(f.answered ?? {})),
    bound: 3,
    unaskable: false,
    mayRelist: true,
    ...f,
  });

  it.each([
    ['nothing unlisted', facts({}), { step: 'commit', gone: [], kept: [] }],
    [
      'every unlisted key answered not found',
      facts({ unlisted: ['A', 'B'], answered: { A: 'gone', B: 'gone' } }),
      { step: 'commit', gone: ['A', 'B'], kept: [] },
    ],
    [
      'the last listing did not list them either',
      facts({ unlisted: ['A', 'B'], suspects: new Set(['A', 'B', 'Z']) }),
      { step: 'commit', gone: ['A', 'B'], kept: [] },
    ],
    [
      'a second empty listing',
      facts({ unlisted: ['A', 'B', 'C', 'D', 'E'], suspects: 'all' }),
      { step: 'commit', gone: ['A', 'B', 'C', 'D', 'E'], kept: [] },
    ],
    [
      'a few open (one agreed)',
      facts({ unlisted: ['A', 'B', 'C', 'D'], suspects: new Set(['A']) }),
      { step: 'confirm', ask: ['B', 'C', 'D'] },
    ],
    [
      'one found by its GET: the pages skipped it',
      facts({ unlisted: ['A', 'C'], answered: { A: 'gone', C: 'there' } }),
      { step: 'relist', suspects: ['A'], why: expect.stringMatching(/skipped 1 record.*"C"/) },
    ],
    [
      'one found, no more listings in this sync',
      facts({ unlisted: ['A', 'C'], answered: { A: 'gone', C: 'there' }, mayRelist: false }),
      { step: 'commit', gone: ['A'], kept: ['C'] },
    ],
    [
      'too many open: a second listing is the cheaper proof',
      facts({ unlisted: ['A', 'B', 'C', 'D'] }),
      { step: 'relist', suspects: ['A', 'B', 'C', 'D'], why: expect.stringMatching(/4 record\(s\).*second listing/) },
    ],
    [
      'a GET was refused',
      facts({ unlisted: ['A', 'B'], answered: { A: 'gone' }, unaskable: true }),
      { step: 'relist', suspects: ['A', 'B'], why: expect.stringMatching(/could not be asked/) },
    ],
    [
      'too many open, no more listings in this sync',
      facts({ unlisted: ['A', 'B', 'C', 'D'], mayRelist: false }),
      { step: 'stop', suspects: ['A', 'B', 'C', 'D'], why: expect.any(String) },
    ],
  ] as const)('with %s', (_, f, step) => {
    expect(listingEnd(f)).toEqual(step);
  });

  type Row = { code: string };
  const get =
    (answers: Record<string, Row | null | Error>) =>
    async (key: string): Promise<ItemAnswer<Row>> => {
      const a = answers[key];
      if (a instanceof Error) throw a;
      return a === undefined || a === null ? { record: null } : { record: a };
    };

  it('tells gone from there, and keeps what a GET found under the key asked', async () => {
    const into = await askUnlisted(
      ['A', 'B', 'C'],
      get({ A: null, B: { code: 'B' }, C: { code: 'OTHER' } }),
      (r) => r.code,
      emptyAnswers<Row>(),
    );
    expect(Object.fromEntries(into.answers)).toEqual({ A: 'gone', B: 'there', C: 'there' });
    expect([...into.kept.keys()]).toEqual(['B']);
    expect(into.refused).toBeNull();
  });

  it('stops asking at a refusal, which answers nothing about the record', async () => {
    const refusal = new ShopLookupError(
      'forbidden',
      "The shop's server (its relay) does not allow this client to read a coupon by its code.",
    );
    const into = await askUnlisted(['A', 'B'], get({ A: refusal, B: null }), (r) => r.code, emptyAnswers<Row>());
    expect(into.answers.has('A')).toBe(false);
    expect(into.refused).toEqual({ code: 'forbidden', message: refusal.message });
  });

  it('throws a failure that can heal', async () => {
    const down = new ShopLookupError('network_error', 'Could not reach the shop API.');
    await expect(askUnlisted(['A'], get({ A: down }), (r) => r.code, emptyAnswers<Row>())).rejects.toBe(down);
  });
});
