// The feed's answers and records (GET {basePath}/relay/v1/feed, 200): a snapshot chunk or the changes after a
// version, each record under its resource (`coupons`, `options:<productNo>`, `uses`) and key. The relay builds a
// FeedAnswer. The engine reads the answer with feedEnvelopeSchema (every field, the records left as they came), then
// each record on its own: readFeedRecord (feedRecordSchema's fields, without zod's copy of 10,000 small objects a
// chunk), then the reader of its kind (records/schemas.ts; a `uses` record: usesRecordSchema), so a bad record is
// reported and never costs its chunk-mates.
import * as z from 'zod/mini';

/** The relay's own state: serving without its store or upstream (`degraded`), and why. */
export const relayStateSchema = z.object({ degraded: z.boolean(), error: z.nullable(z.string()) });

/**
 * One record of the feed. `record` is checked by the reader of its resource (a coupon's, an option's, a `uses`
 * record's), not here: a record that fails is reported and the good copy held kept.
 */
export const feedRecordSchema = z.object({ resource: z.string(), key: z.string(), record: z.unknown() });

/** A deletion: the record under this resource and key is gone. */
export const feedDeleteSchema = z.object({ resource: z.string(), key: z.string() });

/** A feed answer's fields but its records. */
const answerFields = {
  /** The shop the relay serves: a till refuses an answer naming another shop than its database's. */
  shop: z._default(z.string(), ''),
  /** The feed's history: versions of another handle mean nothing here. */
  handle: z.string(),
  /** A snapshot's: the head when it started; changes: the version the client holds once they are applied. */
  version: z.int(),
  kind: z.enum(['snapshot', 'changes']),
  /** The next chunk's cursor (signed by the relay), null after the last chunk and on changes. */
  cursor: z._default(z.nullable(z.string()), null),
  deletes: z._default(z.array(feedDeleteSchema), () => []),
  /** Changes: more wait after these (ask again at once); a snapshot: more chunks follow. */
  more: z._default(z.boolean(), false),
  /** The shop-wide tracked products. */
  products: z._default(z.array(z.int()), () => []),
  /** When the relay's last complete listing confirmed each resource (`coupons`, `options:<no>`), epoch ms. */
  confirmedAt: z.record(z.string(), z.number()),
  relay: z._default(relayStateSchema, () => ({ degraded: false, error: null })),
};

/**
 * A feed answer. Read by an engine, the fields with a default may be missing; the relay always sends every one.
 * @example const answer = z.parse(feedAnswerSchema, JSON.parse(text)); answer.upserts[0].resource
 */
export const feedAnswerSchema = z.object({ ...answerFields, upserts: z.array(feedRecordSchema) });

/**
 * A feed answer with its records as they came (`upserts: unknown[]`): what an engine reads first, before each record
 * on its own (readFeedRecord, then the reader of its kind).
 * @example const envelope = z.parse(feedEnvelopeSchema, JSON.parse(text)); envelope.upserts.map(readFeedRecord)
 */
export const feedEnvelopeSchema = z.object({ ...answerFields, upserts: z.array(z.unknown()) });

/**
 * One record of a feed answer as feedRecordSchema reads it (`resource` and `key` text, `record` any value; the same
 * object, not a copy), or null when it is not one.
 * @example readFeedRecord({ resource: 'coupons', key: 'A', record: { coupon_code: 'A' } })?.key // 'A'
 */
export function readFeedRecord(value: unknown): FeedRecord | null {
  const r = value as Partial<FeedRecord> | null;
  return typeof r === 'object' &&
    r !== null &&
    typeof r.resource === 'string' &&
    typeof r.key === 'string' &&
    'record' in r
    ? (r as FeedRecord)
    : null;
}

/** One record of the feed. */
export type FeedRecord = z.output<typeof feedRecordSchema>;
/** A deletion of the feed. */
export type FeedDelete = z.output<typeof feedDeleteSchema>;
/** A feed answer (200) as the relay sends it. */
export type FeedAnswer = z.output<typeof feedAnswerSchema>;
/** A feed answer as an engine reads it first: its records as they came. */
export type FeedEnvelope = z.output<typeof feedEnvelopeSchema>;
/** The relay's state in a feed answer. */
export type RelayState = z.output<typeof relayStateSchema>;

/** One till's use of an issued coupon, as the feed's `uses` record carries it. */
export const recordedUseSchema = z.object({
  /** The till's name (its token's), or its device id when it has none. */
  till: z.string(),
  device: z.string(),
  /** The till's journal entry: unique per device. */
  entry: z.string(),
  orderId: z.nullable(z.string()),
  /** When it was accepted, as the relay orders it (the till's time, bounded by what the relay can trust). */
  at: z.number(),
  /** The till's own time, as it sent it. */
  claimedAt: z.number(),
  /** When the relay recorded it (the relay's clock): what retention counts from. */
  receivedAt: z.number(),
  override: z.boolean(),
  /** Not the first use of its code and not the same sale (device and orderId) as the first. */
  conflict: z.boolean(),
});

/**
 * The feed's `uses` record of one issued code (its key), and what `GET /ops/uses` lists.
 * @example z.safeParse(usesRecordSchema, upsert.record).success
 */
export const usesRecordSchema = z.object({
  code: z.string(),
  couponCode: z.nullable(z.string()),
  /** By `at`, then `claimedAt`, then `receivedAt`. */
  uses: z.array(recordedUseSchema),
  /** When the shop API was seen showing the code used: the record is a mark, its first use only. */
  confirmed: z.optional(z.number()),
});

/** One use in the feed's `uses` record. */
export type RecordedUse = z.output<typeof recordedUseSchema>;
/** The feed's `uses` record of one issued code. */
export type UsesRecord = z.output<typeof usesRecordSchema>;
