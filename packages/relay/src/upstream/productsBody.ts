// The body of POST relay/v1/products, read strictly with the feed protocol's schema (productsPostSchema in
// @shop-lookup/shop-api): `{ "products": [13801, 13805] }`, small, whole numbers only; a wrong one is named.
import { productsPostSchema, readWire } from '@shop-lookup/shop-api';
import type { IncomingMessage } from 'node:http';
import { readJsonBody } from '../door/jsonBody';

const MAX_BYTES = 64 * 1024;

/**
 * The product numbers (each once), or what is wrong with the body.
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
  const body = readWire(productsPostSchema, read.value, 'the body');
  return body.ok ? [...new Set(body.value.products)] : body.why;
}
