// The relay's wire, typed once (issue 42 part 2): the relay builds its answers as, and the engine reads them into,
// the types inferred from @shop-lookup/shop-api's feed protocol schemas (packages/shop-api/src/feed/), so a change
// to the wire fails to compile on both sides. The type half is checked by `tsc -b` (npm test runs it first); the
// runtime half checks that a real relay's answers carry every field of their schema and read with the engine's.
import type { IncomingMessage } from 'node:http';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';
import { MOCK_CODES } from '@shop-lookup/mock-server';
import { relaysPerTest } from '@shop-lookup/test-kit/relayUtils';
import {
  discoveryAnswerSchema,
  errorAnswerSchema,
  feedAnswerSchema,
  feedEnvelopeSchema,
  productsAnswerSchema,
  RELAY_ERROR_CODES,
  usesAnswerSchema,
  usesRecordSchema,
  type DiscoveryAnswer,
  type ErrorAnswer,
  type FeedAnswer,
  type FeedEnvelope,
  type ProductsPost,
  type RelayErrorCode,
  type ReleaseSent,
  type UseResult,
  type UsesAnswer,
  type UsesPost,
  type UsesRecord,
  type UseSent,
} from '../packages/shop-api/src';
import type { Authorize, UsesList } from '../packages/relay/src';
import type { feedRecordsJson } from '../packages/relay/src/feed/feedRecordsJson';
import type { feedError } from '../packages/relay/src/feed/serveFeed';
import type { UsesBatch, UsesOutcome } from '../packages/relay/src/store/useRecords';
import type { FeedReply, RelayFeedClient, UseAck } from '../packages/shop-lookup/worker/sync/relay/relayFeedClient';

describe('the wire contract', () => {
  it('types what the relay sends and what the engine reads with the same inferred types (checked by tsc -b)', () => {
    // each type is its schema's
    expectTypeOf<FeedAnswer>().toEqualTypeOf<z.output<typeof feedAnswerSchema>>();
    expectTypeOf<FeedEnvelope>().toEqualTypeOf<z.output<typeof feedEnvelopeSchema>>();
    expectTypeOf<DiscoveryAnswer>().toEqualTypeOf<z.output<typeof discoveryAnswerSchema>>();
    expectTypeOf<UsesAnswer>().toEqualTypeOf<z.output<typeof usesAnswerSchema>>();
    expectTypeOf<UsesRecord>().toEqualTypeOf<z.output<typeof usesRecordSchema>>();
    // the feed: the relay writes a FeedAnswer, the engine reads the same answer with its records left as they came
    expectTypeOf<Parameters<typeof feedRecordsJson>[0]>().toEqualTypeOf<FeedAnswer>();
    expectTypeOf<Extract<FeedReply, { status: 200 }>['answer']>().toEqualTypeOf<FeedEnvelope>();
    expectTypeOf<Omit<FeedEnvelope, 'upserts'>>().toEqualTypeOf<Omit<FeedAnswer, 'upserts'>>();
    // uses and releases: the engine sends what the relay reads, and reads what the relay answers
    expectTypeOf<Parameters<RelayFeedClient['postUses']>[1]>().toEqualTypeOf<UseSent[]>();
    expectTypeOf<UsesBatch['uses']>().toEqualTypeOf<UseSent[]>();
    expectTypeOf<Parameters<NonNullable<RelayFeedClient['postReleases']>>[1]>().toEqualTypeOf<ReleaseSent[]>();
    expectTypeOf<NonNullable<UsesBatch['releases']>>().toEqualTypeOf<ReleaseSent[]>();
    expectTypeOf<Extract<UsesOutcome, { results: unknown }>['results']>().toEqualTypeOf<UseResult[]>();
    expectTypeOf<UseAck>().toEqualTypeOf<Pick<UseResult, 'entry' | 'recorded' | 'conflict'>>();
    expectTypeOf<{ device: string; uses: UseSent[] }>().toExtend<UsesPost>();
    expectTypeOf<{ products: number[] }>().toEqualTypeOf<ProductsPost>();
    // the uses the relay holds are the feed's `uses` records; its error answers carry one of its codes
    expectTypeOf<UsesList>().toEqualTypeOf<UsesRecord[]>();
    expectTypeOf<Parameters<typeof feedError>[1]>().toEqualTypeOf<RelayErrorCode>();
    expectTypeOf<ErrorAnswer['code']>().toEqualTypeOf<RelayErrorCode>();
  });

  describe('a relay', () => {
    const { relayWith } = relaysPerTest();
    const TILL = { 'x-till': 'front-1' };
    const JSON_TILL = { ...TILL, 'content-type': 'application/json' };
    const till = {
      public: false,
      authorize: ((req) =>
        typeof req.headers['x-till'] === 'string' || {
          status: 401,
          message: 'Sign this till in first.',
        }) satisfies Authorize,
      clientId: (req: IncomingMessage) =>
        typeof req.headers['x-till'] === 'string'
          ? { id: `till:${req.headers['x-till']}`, identified: true }
          : (req.socket.remoteAddress ?? ''),
    };
    const fields = (schema: { shape: object }) => Object.keys(schema.shape).sort();
    const read = <S extends z.ZodMiniType>(schema: S, body: unknown) => z.safeParse(schema, body);

    it('answers discovery, the feed, uses, releases and products with every field of their schemas, as the engine reads them', async () => {
      const f = await relayWith(till, {}, { listed: true });
      const discovery = await f.get('/relay/v1', { headers: TILL });
      expect(Object.keys(discovery.body!).sort()).toEqual(fields(discoveryAnswerSchema));
      expect(read(discoveryAnswerSchema, discovery.body).data).toEqual(discovery.body);

      const use: UseSent = {
        entry: 'e1',
        code: MOCK_CODES.issuedUnused,
        couponCode: MOCK_CODES.welcomeCoupon,
        orderId: 'order-1',
        at: 1_000,
        override: false,
      };
      const post = (body: UsesPost) =>
        f.get('/relay/v1/uses', { method: 'POST', headers: JSON_TILL, body: JSON.stringify(body) });
      const uses = await post({ device: 'd1', uses: [use] });
      expect(uses.status).toBe(200);
      expect(read(usesAnswerSchema, uses.body).data).toEqual(uses.body);
      const released = await post({
        device: 'd1',
        uses: [],
        releases: [{ entry: 'r1', code: use.code, use: 'never-sent' }],
      });
      expect(Object.keys(released.body!).sort()).toEqual(fields(usesAnswerSchema));
      expect(read(usesAnswerSchema, released.body).data).toEqual(released.body);

      const snapshot = await f.get('/relay/v1/feed?limit=10000', { headers: TILL });
      expect(Object.keys(snapshot.body!).sort()).toEqual(fields(feedAnswerSchema));
      expect(read(feedAnswerSchema, snapshot.body).data).toEqual(snapshot.body);
      const changes = await f.get(
        `/relay/v1/feed?since=${snapshot.body!.version - 1}&handle=${snapshot.body!.handle}`,
        { headers: TILL },
      );
      expect(Object.keys(changes.body!).sort()).toEqual(fields(feedAnswerSchema));
      expect(read(feedEnvelopeSchema, changes.body).data).toEqual(changes.body);
      const usesRecords = [...snapshot.body!.upserts, ...changes.body!.upserts].filter(
        (u: { resource: string }) => u.resource === 'uses',
      );
      expect(usesRecords.length).toBeGreaterThan(0);
      for (const u of usesRecords) expect(read(usesRecordSchema, u.record).data).toEqual(u.record);

      const products = await f.get('/relay/v1/products', { headers: TILL });
      expect(Object.keys(products.body!).sort()).toEqual(fields(productsAnswerSchema));
      expect(read(productsAnswerSchema, products.body).data).toEqual(products.body);
    });

    it('answers its refusals and errors as error answers of its codes, the door marking its own refusal', async () => {
      const f = await relayWith(till, {}, { listed: true });
      const refused = await f.get('/relay/v1/feed');
      expect(refused.status).toBe(401);
      const bad = await f.get('/relay/v1/feed?since=x&handle=h', { headers: TILL });
      expect(bad.status).toBe(400);
      for (const answer of [refused, bad]) {
        expect(read(errorAnswerSchema, answer.body).data).toEqual(answer.body);
        expect(RELAY_ERROR_CODES).toContain(answer.body!.code);
      }
      expect(refused.body).toMatchObject({ code: 'unauthorized', refusal: { code: 'unauthorized', by: 'relay' } });
    });
  });
});
