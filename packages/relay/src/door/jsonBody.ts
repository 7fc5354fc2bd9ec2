// A POST body of the relay's own routes read as JSON within a byte bound: what POST relay/v1/products and
// relay/v1/uses share (their fields are read with the feed protocol's schemas, readWire in @shop-lookup/shop-api).
import type { IncomingMessage } from 'node:http';

/**
 * The body parsed as JSON, or what is wrong with it (too long: `tooLong`; not JSON: `notJson`, both in the caller's
 * words). Reading stops at the first byte past `maxBytes`.
 * @example const body = await readJsonBody(req, 65_536, 'the body must be at most 65536 bytes', 'the body must be
 * JSON');
 */
export async function readJsonBody(
  req: IncomingMessage,
  maxBytes: number,
  tooLong: string,
  notJson: string,
): Promise<{ ok: true; value: unknown } | { ok: false; why: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return { ok: false, why: tooLong };
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, why: notJson };
  }
}
