// The relay command's operator routes for the tills' uses of issued coupons: GET /ops/uses (the uses held, per
// issued code, as the feed's `uses` records) and POST /ops/uses/drop (a till's, some codes', or a till's of some
// codes). The command answers with these types and reads a drop's body with opsDropSchema.
import * as z from 'zod/mini';
import { usesRecordSchema } from './feedAnswer';

/** Operators' names and codes: 1 to 200 characters. */
/* @__NO_SIDE_EFFECTS__ */
function name(error: string) {
  return z.string({ error }).check(z.minLength(1, error), z.maxLength(200, error));
}

/**
 * What to drop (POST /ops/uses/drop), or list (GET /ops/uses, from its query): a till's uses, some codes', or both;
 * `shop` names the shop of a hub.
 * @example z.safeParse(opsDropSchema, { till: 'front-1' })
 */
export const opsDropSchema = z.object(
  {
    till: z.optional(name("must be a till's name (1 to 200 characters)")),
    codes: z.optional(
      /* @__PURE__ */ z
        .array(name('must be an issued coupon code (1 to 200 characters)'), {
          error: 'must be an array of at most 1,000 issued coupon codes',
        })
        .check(z.maxLength(1_000, 'must be an array of at most 1,000 issued coupon codes')),
    ),
    shop: z.optional(name("must be a shop's id")),
  },
  { error: 'must be { "till"?: "…", "codes"?: [ … ] }' },
);

/** The answer of GET /ops/uses: per issued code, the uses the relay holds. */
export const opsUsesAnswerSchema = z.object({ uses: z.array(usesRecordSchema) });

/** The answer of POST /ops/uses/drop: how many codes and uses were dropped. */
export const opsDropAnswerSchema = z.object({ codes: z.int(), uses: z.int() });

/** A drop's (or a list's) filter as the command reads it. */
export type OpsDrop = z.output<typeof opsDropSchema>;
/** The answer of GET /ops/uses. */
export type OpsUsesAnswer = z.output<typeof opsUsesAnswerSchema>;
/** The answer of POST /ops/uses/drop. */
export type OpsDropAnswer = z.output<typeof opsDropAnswerSchema>;
