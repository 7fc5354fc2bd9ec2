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
 * A coupon code as a person typed or scanned it, in the one form every lookup uses, online and offline alike:
 * surrounding whitespace (spaces, tabs, a scanner's line end, no-break spaces) is dropped; case and inner spaces
 * are kept. Anything but a string is left for the caller's check to refuse.
 * @example typedCode(' WELCOME10\n') // 'WELCOME10'
 */
export function typedCode<T>(value: T): T {
  return (typeof value === 'string' ? value.trim() : value) as T;
}

/** Encodes a user-given path segment: `/ ? # %`, spaces and Korean text all reach the right endpoint. */
export function segment(value: string): string {
  const problem = codeProblem(value);
  if (problem !== null) throw new ShopLookupError('bad_request', problem);
  return encodeURIComponent(value);
}
