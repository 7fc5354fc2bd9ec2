// A record's hash: SHA-1 of its canonical JSON (keys sorted at every level), so the same record hashes the same
// on every instance and in every key order. Equal hash, unchanged record: the diff of a listing compares these.
import { createHash } from 'node:crypto';

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = canonical((value as Record<string, unknown>)[key]);
  return out;
}

/** @example recordHash({ b: 1, a: 2 }) === recordHash({ a: 2, b: 1 }) // true */
export function recordHash(record: unknown): string {
  return createHash('sha1')
    .update(JSON.stringify(canonical(record)))
    .digest('base64url');
}
