// A code from a user becomes exactly one path segment of an API URL, or is refused: it can never reach another
// endpoint. Apart from the API client so that the engine's entry can refuse a bad code without loading it.
import { ShopLookupError } from '../errors';

/**
 * Why a user-given code cannot be one path segment, or null when it can. `.` and `..` cannot: URL parsing drops
 * or climbs them, percent-encoded too (`%2E%2E` is `..` to the WHATWG URL parser), so the request would reach
 * another endpoint and its answer would say nothing about the code.
 * @example codeProblem('..') // 'A code cannot be "." or ".." ...'
 */
export function codeProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value === '')
    return `A code must be a non-empty string, got ${JSON.stringify(value)}.`;
  if (value === '.' || value === '..') {
    return `A code cannot be "." or ".." (got ${JSON.stringify(value)}): no URL can carry it to the API as one path segment.`;
  }
  return null;
}

/**
 * Characters nobody sees that keyboards, scanners and copy-paste slip into a code: zero-width spaces and joiners,
 * the word joiner, the byte order mark, the soft hyphen, the direction marks and embeddings.
 */
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * A coupon code as a person typed or scanned it, in the one form every lookup uses, online and offline alike: in
 * Unicode's composed form (NFC: Korean typed as separate jamo, as some keyboards send it, is the same code), without
 * invisible characters (zero-width spaces, BOM, direction marks), surrounding whitespace (spaces, tabs, a scanner's
 * line end, no-break spaces) dropped; case and inner spaces are kept. Anything but a string is left for the caller's
 * check to refuse.
 * @example typedCode(' WELCOME10\n') // 'WELCOME10'
 * @example typedCode('\u200bWELCOME10') // 'WELCOME10'
 */
export function typedCode<T>(value: T): T {
  return (typeof value === 'string' ? value.normalize('NFC').replace(INVISIBLE, '').trim() : value) as T;
}

/**
 * A code quoted for a message a person reads: what cannot be seen (control and format characters, odd spaces) is
 * shown escaped, so a code that differs from the shop's by an invisible character does not look like the shop's.
 * @example quoteCode('NOPE\u202e1') // '"NOPE\\u202e1"'
 */
export function quoteCode(code: string): string {
  return JSON.stringify(code).replace(
    /[\p{Cf}\p{Zl}\p{Zp}\u007f-\u009f\u00a0\u2000-\u200a\u202f\u205f\u3000]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Encodes a user-given path segment: `/ ? # %`, spaces and Korean text all reach the right endpoint. */
export function segment(value: string): string {
  const problem = codeProblem(value);
  if (problem !== null) throw new ShopLookupError('bad_request', problem);
  return encodeURIComponent(value);
}
