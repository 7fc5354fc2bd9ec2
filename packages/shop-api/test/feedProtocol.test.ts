// The feed protocol's schemas (src/feed/): what the relay answers and reads, what the engine sends and reads, one
// definition for both. A relay's body read names the field it refuses; an engine reads an answer without the
// fields that have a default, and each record of a feed answer on its own.
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import {
  discoveryAnswerSchema,
  feedAnswerSchema,
  feedEnvelopeSchema,
  feedRecordSchema,
  readFeedRecord,
  readWire,
  usesAnswerSchema,
  usesPostSchema,
} from '../src';

const use = (entry: string, fields: Record<string, unknown> = {}) => ({
  entry,
  code: 'IC-1',
  couponCode: 'WELCOME10',
  orderId: 'A-1',
  at: 1_000,
  override: false,
  ...fields,
});

describe('feed protocol', () => {
  it('names the field of a body it refuses, what it must be and what came (never the value written back whole)', () => {
    const why = (body: unknown) => {
      const read = readWire(usesPostSchema, body, 'the body');
      return read.ok ? null : read.why;
    };
    expect(why({ device: 'd1', uses: [use('e1'), use('e2', { at: -5 })] })).toBe(
      'uses[1].at must be epoch milliseconds (a whole number), got -5',
    );
    expect(why({ device: 'd1', uses: [use('e1', { code: 'x'.repeat(300) })] })).toMatch(
      /^uses\[0\]\.code must be the issued coupon's code \(1 to 200 characters\), got "x{40}…"$/,
    );
    expect(why([1, 2])).toBe('the body must be { "device": "…", "uses": [ … ] }, got an array');
    expect(why({ device: 'd1', uses: [], releases: [{ entry: 'r1', code: 'IC-1' }] })).toBe(
      'releases[0].use must be the journal entry key of the use released (1 to 200 characters), got undefined',
    );
    const many = (n: number, f: (i: number) => unknown) => Array.from({ length: n }, (_, i) => f(i));
    expect(
      why({
        device: 'd1',
        uses: many(300, (i) => use(`e${i}`)),
        releases: many(201, (i) => ({ entry: `r${i}`, code: 'c', use: 'u' })),
      }),
    ).toBe('uses must hold at most 500 uses with the releases; send the rest in another request');
    // a till may leave out what has a default
    expect(
      readWire(usesPostSchema, { device: 'd1', uses: [use('e1', { couponCode: undefined })] }, 'the body'),
    ).toEqual({
      ok: true,
      value: { device: 'd1', uses: [use('e1', { couponCode: null })], claim: false, releases: [] },
    });
  });

  it('reads an answer without the fields that have a default, and refuses one of another protocol', () => {
    const read = readWire(
      feedEnvelopeSchema,
      { handle: 'h1', version: 3, kind: 'changes', upserts: [null], confirmedAt: {}, extra: true },
      'the answer',
    );
    expect(read).toEqual({
      ok: true,
      value: {
        shop: '',
        handle: 'h1',
        version: 3,
        kind: 'changes',
        cursor: null,
        upserts: [null],
        deletes: [],
        more: false,
        products: [],
        confirmedAt: {},
        relay: { degraded: false, error: null },
      },
    });
    expect(readWire(discoveryAnswerSchema, { relay: 'shop-lookup', protocol: 1 }, 'x')).toMatchObject({
      ok: true,
      value: { shop: '', routes: null },
    });
    expect(readWire(discoveryAnswerSchema, { relay: 'shop-lookup', protocol: 2 }, 'x').ok).toBe(false);
    expect(
      readWire(
        usesAnswerSchema,
        { uses: [{ entry: 'e1', recorded: 'yes', conflict: null }], version: 1 },
        'the answer',
      ),
    ).toEqual({
      ok: false,
      why: expect.stringMatching(/^uses\[0\]\.recorded: /),
    });
  });

  it('reads a record of a feed answer as feedRecordSchema does, without copying it', () => {
    const samples: unknown[] = [
      { resource: 'coupons', key: 'A', record: { coupon_code: 'A' } },
      { resource: 'uses', key: 'IC-1', record: null, extra: 1 },
      { resource: 'coupons', key: 7, record: {} },
      { key: 'A', record: {} },
      { resource: 'coupons', key: 'A' },
      null,
      'coupons',
      [],
    ];
    for (const sample of samples) {
      const byZod = z.safeParse(feedRecordSchema, sample).success;
      expect(readFeedRecord(sample) !== null, JSON.stringify(sample)).toBe(byZod);
    }
    const record = samples[0];
    expect(readFeedRecord(record)).toBe(record);
    // the full answer's schema reads its records with feedRecordSchema
    const answer = { handle: 'h1', version: 1, kind: 'snapshot', upserts: [{ key: 'A', record: {} }], confirmedAt: {} };
    expect(z.safeParse(feedAnswerSchema, answer).success).toBe(false);
  });
});
