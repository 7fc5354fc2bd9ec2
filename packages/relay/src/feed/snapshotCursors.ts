// Snapshot cursors the relay signs, so it serves only the chunks it cut itself: a cursor binds the feed's history
// (handle), the snapshot's version, the chunk size and the last position handed out, under an HMAC with a key every
// instance of the shop shares (kept in the store). A made-up or altered cursor is refused before anything is read,
// serialised, compressed or kept. Chunk sizes are the relay's own (a `limit` between them is taken as the size below
// it), so a till cannot make the relay cut (and compress) a new set of chunks for every limit it asks.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The snapshot chunk sizes the relay cuts: a `limit` is taken as the largest of them not above it. */
const CHUNK_SIZES = [1, 10, 100, 1_000, 5_000, 10_000] as const;

/**
 * Chunks of at least this many records are kept in the store for the other instances (the engine reads 10,000 at a
 * time, a plain client 5,000 by default); smaller ones are compressed by each instance that serves them.
 */
export const KEPT_CHUNK_SIZE = 1_000;

/**
 * The chunk size a snapshot request with `limit` gets.
 * @example chunkSize(7) // 1; chunkSize(2_000) // 1_000; chunkSize(10_000) // 10_000
 */
export function chunkSize(limit: number): number {
  let size: number = CHUNK_SIZES[0];
  for (const s of CHUNK_SIZES) if (s <= limit) size = s;
  return size;
}

/** What a cursor the relay signed says: where the snapshot started (`version`), its chunk size, the last position. */
export interface SnapshotCursor {
  version: number;
  limit: number;
  after: string;
}

/**
 * How a cursor reads: `ok` (signed by this relay for this handle), `stale` (a cursor of a relay before cursors were
 * signed: the till starts its snapshot again), `forged` (anything else: made up, altered, another history's key).
 */
type CursorReading = { ok: true; cursor: SnapshotCursor } | { ok: false; why: 'stale' | 'forged' };

export interface SnapshotCursors {
  /** The cursor of the chunk after `after`. */
  sign(handle: string, cursor: SnapshotCursor): Promise<string>;
  /** Reads and checks a cursor given with `handle`. */
  read(handle: string, text: string): Promise<CursorReading>;
  /** Reads the key of `handle` ahead (so cursors still work while the store is away); never throws. */
  prepare(handle: string): Promise<void>;
}

const SIGNED = /^([A-Za-z0-9_-]{1,4000})\.([A-Za-z0-9_-]{43})$/;

/**
 * The form of a cursor, before its signature is checked: `signed` (this relay's form), `unsigned` (a relay's before
 * cursors were signed), or null (no cursor any relay handed out).
 * @example cursorForm('WzEsMTAsImEiXQ.' + 'x'.repeat(43)) // 'signed'
 */
export function cursorForm(text: string): 'signed' | 'unsigned' | null {
  return SIGNED.test(text) ? 'signed' : unsigned(text) ? 'unsigned' : null;
}

/** Whether `text` is a cursor of a relay before cursors were signed: base64url of `[version, position]`. */
function unsigned(text: string): boolean {
  if (!/^[A-Za-z0-9_-]{1,4000}$/.test(text)) return false;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    return Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string';
  } catch {
    return false;
  }
}

const mac = (key: Buffer, handle: string, payload: string): Buffer =>
  createHmac('sha256', key).update(`${handle}\u0000${payload}`).digest();

/**
 * @param keyOf the signing key of a feed history (the store's, shared by every instance); read once per handle.
 * @example const cursors = createSnapshotCursors(() => store.cursorKey()); await cursors.sign(head.handle, { version,
 * limit, after });
 */
export function createSnapshotCursors(keyOf: () => Promise<Buffer>): SnapshotCursors {
  let known: { handle: string; key: Promise<Buffer> } | null = null;
  function key(handle: string): Promise<Buffer> {
    if (known?.handle !== handle) {
      const entry = { handle, key: keyOf() };
      known = entry;
      // a key that could not be read is asked for again next time (the store was away)
      entry.key.catch(() => {
        if (known === entry) known = null;
      });
    }
    return known.key;
  }
  return {
    prepare: (handle) =>
      key(handle).then(
        () => undefined,
        () => undefined,
      ),
    async sign(handle, { version, limit, after }) {
      const payload = Buffer.from(JSON.stringify([version, limit, after]), 'utf8').toString('base64url');
      return `${payload}.${mac(await key(handle), handle, payload).toString('base64url')}`;
    },
    async read(handle, text) {
      const signed = SIGNED.exec(text);
      if (!signed) return { ok: false, why: unsigned(text) ? 'stale' : 'forged' };
      const [, payload, given] = signed as unknown as [string, string, string];
      const expected = mac(await key(handle), handle, payload);
      const bytes = Buffer.from(given, 'base64url');
      if (bytes.length !== expected.length || !timingSafeEqual(bytes, expected)) return { ok: false, why: 'forged' };
      try {
        const value: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
        const [version, limit, after] = Array.isArray(value) && value.length === 3 ? (value as unknown[]) : [];
        if (
          Number.isSafeInteger(version) &&
          (version as number) >= 0 &&
          CHUNK_SIZES.includes(limit as (typeof CHUNK_SIZES)[number]) &&
          typeof after === 'string'
        ) {
          return { ok: true, cursor: { version: version as number, limit: limit as number, after } };
        }
      } catch {
        // signed by us, so never: falls through
      }
      return { ok: false, why: 'forged' };
    },
  };
}
