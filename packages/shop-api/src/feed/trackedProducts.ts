// POST {basePath}/relay/v1/products (a till's products into the shop-wide tracked set) and the answer of it and of
// GET on the same path. The engine sends a ProductsPost and reads the answer with productsAnswerSchema; the relay
// reads the body with productsPostSchema.
import * as z from 'zod/mini';

/** Products of one POST, at most. */
export const MAX_PRODUCTS_PER_POST = 1_000;

/**
 * The body: product numbers, whole and at least 1.
 * @example z.safeParse(productsPostSchema, { products: [13801, 13805] })
 */
export const productsPostSchema = z.object(
  {
    products: /* @__PURE__ */ z
      .array(
        /* @__PURE__ */ z
          .int({ error: 'must be a product number (a whole number >= 1)' })
          .check(z.gte(1, 'must be a product number (a whole number >= 1)')),
        {
          error: 'must be an array of product numbers',
        },
      )
      .check(z.maxLength(MAX_PRODUCTS_PER_POST, `must hold at most ${MAX_PRODUCTS_PER_POST} products at once`)),
  },
  { error: 'must be { "products": [ ...product numbers ] }' },
);

/** The answer: the whole tracked set, and the numbers still being checked with the shop API (202 while any). */
export const productsAnswerSchema = z.object({
  products: z.array(z.int()),
  pending: z._default(z.array(z.int()), () => []),
});

/** The body a till sends. */
export type ProductsPost = z.output<typeof productsPostSchema>;
/** The answer to POST or GET relay/v1/products. */
export type ProductsAnswer = z.output<typeof productsAnswerSchema>;
