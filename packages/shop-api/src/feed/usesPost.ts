// POST {basePath}/relay/v1/uses and its answer: a till's uses of issued coupons (a claim when `claim` is true) and
// its releases (voided sales). The engine sends a UsesPost and reads the answer with usesAnswerSchema; the relay
// reads the body with usesPostSchema (a wrong field is named in its 400: readWire.ts) and answers a UsesAnswer.
import * as z from 'zod/mini';

/** Uses and releases of one POST together, at most. */
export const MAX_USES_PER_POST = 500;
/** Bytes of one POST's body, at most. */
export const MAX_USES_BODY_BYTES = 64 * 1024;

/** Ids and codes: 1 to 200 characters, no control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: keeping control characters out is this pattern's job
const TEXT = /^[^\u0000-\u001f\u007f]{1,200}$/;
// (pure: an engine's bundle, which reads answers only, leaves the body's schema out)
/* @__NO_SIDE_EFFECTS__ */
function text(error: string) {
  return z.string({ error }).check(z.regex(TEXT, { error }));
}
/* @__NO_SIDE_EFFECTS__ */
function textOrNull(error: string) {
  return z._default(z.nullable(text(error)), null);
}
const yesNo = z.boolean({ error: 'must be true or false' });

/** One use as a till sends it. */
export const useSentSchema = z.object(
  {
    /** The till's journal entry: unique per device (a resend of it is recorded once). */
    entry: text("must be the journal entry's key (1 to 200 characters)"),
    /** The issued coupon's code: the feed record's key. */
    code: text("must be the issued coupon's code (1 to 200 characters)"),
    couponCode: textOrNull("must be the coupon's code or null"),
    orderId: textOrNull("must be the order's id or null"),
    /** When the till accepted it, epoch ms of its clock. */
    at: /* @__PURE__ */ z
      .int({ error: 'must be epoch milliseconds (a whole number)' })
      .check(z.gte(0, { error: 'must be epoch milliseconds (a whole number)' })),
    /** Let through by `acceptRepeatUse`. */
    override: yesNo,
  },
  { error: 'must be an object' },
);

/** A release (a voided sale): its own journal key, the code, and the journal key of the use given back. */
export const releaseSentSchema = z.object(
  {
    entry: text("must be the release's journal entry key (1 to 200 characters)"),
    code: text("must be the issued coupon's code (1 to 200 characters)"),
    use: text('must be the journal entry key of the use released (1 to 200 characters)'),
  },
  { error: 'must be an object' },
);

const tooMany = `must hold at most ${MAX_USES_PER_POST} uses and releases together; send the rest in another request`;
const tooManyWith = `must hold at most ${MAX_USES_PER_POST} uses with the releases; send the rest in another request`;

/**
 * The body of POST relay/v1/uses: one device's uses (claims, with `claim: true`) and releases.
 * @example z.safeParse(usesPostSchema, { device: 'd-1', uses: [use], claim: true })
 */
export const usesPostSchema = /* @__PURE__ */ z
  .object(
    {
      device: text("must be the till's device id (1 to 200 characters)"),
      uses: /* @__PURE__ */ z
        .array(useSentSchema, { error: 'must be an array of uses' })
        .check(z.maxLength(MAX_USES_PER_POST, tooMany)),
      /** The uses are claims: recorded only as the first use of their code (or the same sale as the first). */
      claim: z._default(yesNo, false),
      releases: z._default(
        /* @__PURE__ */ z
          .array(releaseSentSchema, { error: 'must be an array of releases' })
          .check(z.maxLength(MAX_USES_PER_POST, tooMany)),
        () => [],
      ),
    },
    { error: 'must be { "device": "…", "uses": [ … ] }' },
  )
  .check(
    z.refine((body) => body.uses.length + body.releases.length <= MAX_USES_PER_POST, {
      error: tooManyWith,
      path: ['uses'],
    }),
  );

/** The use of a code another sale made first: the one a conflicting use conflicts with. */
const conflictFields = { till: z.string(), at: z.number(), orderId: z.nullable(z.string()) };
export const useConflictSchema = z.object(conflictFields);

/** The relay's word on one use: recorded now (false: a resend, or a claim refused), and its conflict. */
export const useResultSchema = z.object({
  entry: z.string(),
  recorded: z.boolean(),
  conflict: z.nullable(useConflictSchema),
  /** A claim's: whether it is the first use of its code (or the same sale as the first). */
  claimed: z.optional(z.boolean()),
  /** A claim refused: the first use of the code (the sale that has it). */
  first: z.optional(z.object({ ...conflictFields, device: z.string() })),
});

/** The relay's word on one release: given back, or nothing to give back; `refused`: the use is another till's. */
export const releaseResultSchema = z.object({
  entry: z.string(),
  released: z.boolean(),
  refused: z.optional(z.literal(true)),
});

/**
 * The answer (200): each use and release in the order sent, and the feed's version after the commit.
 * @example z.parse(usesAnswerSchema, json).uses[0].recorded
 */
export const usesAnswerSchema = z.object({
  uses: z.array(useResultSchema),
  releases: z.optional(z.array(releaseResultSchema)),
  version: z.int(),
});

/** The body a till sends (claim and releases may be left out). */
export type UsesPost = z.input<typeof usesPostSchema>;
/** The body as the relay reads it. */
export type UsesPostRead = z.output<typeof usesPostSchema>;
/** One use as a till sends it. */
export type UseSent = z.output<typeof useSentSchema>;
/** One release as a till sends it. */
export type ReleaseSent = z.output<typeof releaseSentSchema>;
/** The earlier use a conflicting one conflicts with. */
export type UseConflict = z.output<typeof useConflictSchema>;
/** The relay's word on one use. */
export type UseResult = z.output<typeof useResultSchema>;
/** The relay's word on one release. */
export type ReleaseResult = z.output<typeof releaseResultSchema>;
/** The answer to POST relay/v1/uses. */
export type UsesAnswer = z.output<typeof usesAnswerSchema>;
