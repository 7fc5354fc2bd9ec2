// The body of an answer as the client asked for it (Accept-Encoding): brotli or gzip, or as it is. Small bodies stay
// as they are (they fit one TCP segment either way). An answer sent as it is to many clients (a feed answer, made
// once per version for every till) is compressed once per coding, at a higher quality, and its compressed bytes
// may be kept beside the feed (`kept`) for the relay's other instances: a hundred tills cost one compression.
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { chooseEncoding, type ContentCoding } from './acceptEncoding';

/**
 * Bodies under this many bytes are sent as they are: with the headers they fit one TCP segment (about 1.4 kB)
 * compressed or not, so no round trip is saved, and compressing them costs 35–80 µs each (docs/performance.md).
 */
const MIN_COMPRESSED_BYTES = 1_024;
/** Brotli quality of a body compressed once for many clients (9.8× on snapshot chunks, ~130 ms per 10,000 coupons). */
const REUSED_BROTLI_QUALITY = 5;
/** Brotli quality of a body compressed for one client (an upstream page, a list answer: ~1.4 ms per 50 kB). */
const ONCE_BROTLI_QUALITY = 4;
const GZIP_LEVEL = 6;

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** Compressed bodies kept outside this process (the relay's store), so other instances send them as they are. */
export interface KeptBodies {
  /** The body in `coding` kept earlier (by this instance or another), or null. */
  read(coding: ContentCoding): Promise<Buffer | null>;
  /** Keeps it for the next client (called once per compression). */
  write(coding: ContentCoding, bytes: Buffer): Promise<void>;
}

/** What compressAnswer reads of an answer. */
export interface Compressible {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Sent as it is to many clients: compressed once per coding (and, with `kept`, kept for other instances). */
  reused?: { kept?: KeptBodies | undefined } | undefined;
}

/** An answer's body as it goes out, and its coding (null: as it is). */
export interface Coded {
  body: Buffer;
  coding: ContentCoding | null;
}

/** The compressed bodies of answers sent to many clients, per answer (gone with the answer). */
const made = new WeakMap<Compressible, Map<ContentCoding, Promise<Buffer>>>();

function compress(body: Buffer, coding: ContentCoding, reused: boolean): Promise<Buffer> {
  if (coding === 'gzip') return gzipped(body, { level: GZIP_LEVEL });
  const quality = reused ? REUSED_BROTLI_QUALITY : ONCE_BROTLI_QUALITY;
  return brotli(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
}

/**
 * Reads the kept bytes, else compresses and keeps them; a store that fails is passed by (the client still gets them).
 */
async function keptOrCompressed(answer: Compressible, coding: ContentCoding): Promise<Buffer> {
  const kept = answer.reused?.kept;
  const stored = kept ? await kept.read(coding).catch(() => null) : null;
  if (stored) return stored;
  const bytes = await compress(answer.body, coding, true);
  if (kept) await kept.write(coding, bytes).catch(() => undefined);
  return bytes;
}

/**
 * The answer's body in the coding `acceptEncoding` asks for (br, gzip), or as it is: for small bodies, bodiless
 * statuses, an answer that names its own coding, or when compressing failed.
 * @example const { body, coding } = await compressAnswer(answer, req.headers['accept-encoding']);
 */
export async function compressAnswer(answer: Compressible, acceptEncoding: string | undefined): Promise<Coded> {
  const plain: Coded = { body: answer.body, coding: null };
  if (answer.body.length < MIN_COMPRESSED_BYTES || answer.status === 204 || answer.status === 304) return plain;
  if (Object.keys(answer.headers).some((h) => h.toLowerCase() === 'content-encoding')) return plain;
  const coding = chooseEncoding(acceptEncoding);
  if (coding === null) return plain;
  try {
    if (!answer.reused) return { body: await compress(answer.body, coding, false), coding };
    let codings = made.get(answer);
    if (!codings) made.set(answer, (codings = new Map()));
    let bytes = codings.get(coding);
    if (!bytes) {
      bytes = keptOrCompressed(answer, coding);
      codings.set(coding, bytes);
      bytes.catch(() => codings.delete(coding));
    }
    return { body: await bytes, coding };
  } catch {
    return plain;
  }
}
