// The body of POST relay/v1/products, read strictly: `{ "products": [13801, 13805] }`, small, whole numbers only.
import type { IncomingMessage } from 'node:http';
import { described, readJsonBody } from '../door/jsonBody';

const MAX_BYTES = 64 * 1024;
const MAX_PRODUCTS = 1_000;

/**
 * The product numbers, or what is wrong with the body.
 * @example const products = await readProductsBody(req); if (typeof products === 'string') answer400(products);
 */
export async function readProductsBody(req: IncomingMessage): Promise<number[] | string> {
  const read = await readJsonBody(
    req,
    MAX_BYTES,
    `the body must be at most ${MAX_BYTES} bytes`,
    'the body must be JSON: { "products": [13801, 13805] }',
  );
  if (!read.ok) return read.why;
  const products = (read.value as { products?: unknown } | null)?.products;
  if (!Array.isArray(products)) return 'the body must be { "products": [ ...product numbers ] }';
  if (products.length > MAX_PRODUCTS) return `at most ${MAX_PRODUCTS} products at once`;
  const bad = products.find((n) => !Number.isSafeInteger(n) || (n as number) < 1);
  if (bad !== undefined) return `product numbers must be whole numbers >= 1, got ${described(bad)}`;
  return [...new Set(products as number[])];
}
