// What the proxy and the relay say about an upstream failure: our code plus fixed text, never the upstream's words
// (the API's codes and their words: @shop-lookup/shop-api's API_CODES, the one list).
// An upstream (or a gateway in front of it) may echo the request, with the key, the secret or the token in it, so
// its `msg`, its body and the error messages made from them are never copied into answers, status or logs; only
// numbers (the API's code, the HTTP status) and what we know ourselves are.
import { API_CODES, bytesText } from '@shop-lookup/shop-api';

/**
 * Our words for the engine's error codes (packages/shop-api/src/api/apiError.ts) when the relay's own listing fails:
 * those of the API's codes (their `listing` words), and those of failures with no API answer.
 */
const FAILURE_TEXT: Record<string, string> = {
  ...Object.fromEntries(Object.values(API_CODES).map((info) => [info.code, info.listing])),
  api_error: 'the shop API answered with an error; it is listed again later',
  network_error: 'the shop API could not be reached; it is listed again later',
  timeout: 'the shop API did not answer in time; it is listed again later',
  bad_response:
    "the shop API's answer could not be read (not its JSON envelope: a failing gateway?); it is listed again later",
};

/** Codes of errors whose messages the relay and its stores write themselves, from nothing an upstream sent. */
const OWN_CODES = new Set([
  'inconsistent_listing',
  'lease_lost',
  'redis_unavailable',
  'redis_unreachable',
  'bad_cursor',
  'closed',
]);

/**
 * A failure in words fit for status, answers and logs: `code: text`, the text fixed unless we wrote the message.
 * @example failureText(apiError) // 'rate_limited: the shop API's rate limit was reached; … (API code -7, HTTP 429)'
 */
export function failureText(error: unknown): string {
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
    apiCode?: unknown;
    status?: unknown;
    maxBytes?: unknown;
  };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined && OWN_CODES.has(code) && typeof e.message === 'string') return `${code}: ${e.message}`;
  const fixed = code !== undefined ? (specialText(code, e) ?? FAILURE_TEXT[code]) : undefined;
  if (fixed === undefined) return 'internal_error: the relay failed unexpectedly; see the server log';
  const numbers = [
    typeof e.apiCode === 'number' ? `API code ${e.apiCode}` : '',
    typeof e.status === 'number' ? `HTTP ${e.status}` : '',
  ].filter(Boolean);
  return `${code}: ${fixed}${numbers.length > 0 ? ` (${numbers.join(', ')})` : ''}`;
}

/** Our words for an answer past its byte bound, and for a redirect (3xx): from numbers only. */
function specialText(code: string, e: { status?: unknown; maxBytes?: unknown }): string | undefined {
  if (code === 'bad_response' && typeof e.maxBytes === 'number') {
    return `the shop API's answer was longer than ${bytesText(e.maxBytes)}, the bound of such an answer, and was dropped unread; it is listed again later`;
  }
  if (code === 'api_error' && typeof e.status === 'number' && e.status >= 300 && e.status < 400) {
    return "the shop API answered with a redirect, which is never followed: the relay's target must be the API's own address";
  }
  return undefined;
}

/**
 * A network failure's cause as a code (`ECONNREFUSED`, `ENOTFOUND`), never its message, which may name the URL.
 * @example networkReason(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })) // 'ECONNREFUSED'
 */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? code : 'no answer';
}

/**
 * Which upstream a failure was met at, for the server's log: its origin (never a path or credentials), and for a
 * failure with no answer the code of why.
 * @example upstreamWhere('http://127.0.0.1:9', networkError) // 'the shop API at http://127.0.0.1:9: ECONNREFUSED'
 */
export function upstreamWhere(target: string, error: unknown): string {
  const where = `the shop API at ${new URL(target).origin}`;
  const unanswered = (error as { code?: unknown } | undefined)?.code === 'network_error';
  return unanswered ? `${where}: ${networkReason((error as { cause?: unknown }).cause)}` : where;
}
