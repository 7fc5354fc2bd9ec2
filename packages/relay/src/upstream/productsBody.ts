// The body of POST relay/v1/products, read strictly: `{ "products": [13801, 13805] }`, small, whole numbers only.
import type { IncomingMessage } from 'node:http';

const MAX_BYTES = 64 * 1024;
const MAX_PRODUCTS = 1_000;

/** A client's value in words, never written back whole: nested ten thousand deep it would overflow the stack. */
function described(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/**
 * The product numbers, or what is wrong with the body.
 * @example const products = await readProductsBody(req); if (typeof products === 'string') answer400(products);
 */
export async function readProductsBody(req: IncomingMessage): Promise<number[] | string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BYTES) return `the body must be at most ${MAX_BYTES} bytes`;
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return 'the body must be JSON: { "products": [13801, 13805] }';
  }
  const products = (body as { products?: unknown } | null)?.products;
  if (!Array.isArray(products)) return 'the body must be { "products": [ ...product numbers ] }';
  if (products.length > MAX_PRODUCTS) return `at most ${MAX_PRODUCTS} products at once`;
  const bad = products.find((n) => !Number.isSafeInteger(n) || (n as number) < 1);
  if (bad !== undefined) return `product numbers must be whole numbers >= 1, got ${described(bad)}`;
  return [...new Set(products as number[])];
}
