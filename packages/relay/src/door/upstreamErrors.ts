// What the proxy and the relay say about an upstream failure: our code plus fixed text, never the upstream's words.
// An upstream (or a gateway in front of it) may echo the request, with the key, the secret or the token in it, so
// its `msg`, its body and the error messages made from them are never copied into answers, status or logs; only
// numbers (the API's code, the HTTP status) and what we know ourselves are.

/** Our fixed words for each documented API code. */
const API_CODE_TEXT: Record<number, string> = {
  [-1]: 'INVALID KEY OR SECRET: the shop API refused the key/secret configured on this server; check them',
  [-2]: 'INVALID ACCESS TOKEN: the shop API refused the access token of this server (renewed once); check the key/secret',
  [-5]: 'NO PERMISSION: the API key configured on this server lacks permission for this call',
  [-6]: "PLAN PERMISSION: the shop's plan or API version does not allow this call",
  [-7]: "TOO MANY REQUESTS: the shop API's rate limit was reached; try again after the Retry-After delay",
  [-10]: 'INVALID PARAMETER: the shop API refused a parameter of this request',
  [-11]: 'NOT FOUND: the shop API has no such data',
  [-19]: 'SERVER ERROR: the shop API had an internal error; try again later',
  [-98]: 'NO SUCH SERVICE: the shop API has no such service',
  [-99]: 'NO SUCH METHOD: the shop API has no such method',
  [-999]: 'MAINTENANCE: the shop API is under maintenance; try again later',
};

/**
 * The message of an API error answer we pass on: fixed text for its code, the numbers only otherwise.
 * @example apiErrorText(-7, 429) // "TOO MANY REQUESTS: the shop API's rate limit was reached; …"
 */
export function apiErrorText(code: number, status: number): string {
  return API_CODE_TEXT[code] ?? `SHOP API ERROR: the shop API answered code ${code} (HTTP ${status}); its message is not passed on`;
}

/** Our words for the engine's error codes (worker/api/apiError.ts) when the relay's own listing fails. */
const FAILURE_TEXT: Record<string, string> = {
  bad_credentials: 'the shop API refused the key/secret configured on this server; check them',
  token_invalid: 'the shop API refused the access token, also a renewed one; check the key/secret',
  permission_denied: 'the API key configured on this server lacks permission for this call',
  plan_permission: "the shop's plan or API version does not allow this call",
  rate_limited: "the shop API's rate limit was reached; listing resumes after its Retry-After",
  bad_request: 'the shop API refused a parameter of a listing request',
  not_found: 'the shop API has no such data',
  server_error: 'the shop API had an internal error; it is listed again later',
  maintenance: 'the shop API is under maintenance; it is listed again later',
  unsupported: 'the shop API does not serve this call',
  api_error: 'the shop API answered with an error; it is listed again later',
  network_error: 'the shop API could not be reached; it is listed again later',
  timeout: 'the shop API did not answer in time; it is listed again later',
  bad_response: "the shop API's answer could not be read (not its JSON envelope: a failing gateway?); it is listed again later",
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
  };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined && OWN_CODES.has(code) && typeof e.message === 'string') return `${code}: ${e.message}`;
  const fixed = code !== undefined ? FAILURE_TEXT[code] : undefined;
  if (fixed === undefined) return 'internal_error: the relay failed unexpectedly; see the server log';
  const numbers = [
    typeof e.apiCode === 'number' ? `API code ${e.apiCode}` : '',
    typeof e.status === 'number' ? `HTTP ${e.status}` : '',
  ].filter(Boolean);
  return `${code}: ${fixed}${numbers.length > 0 ? ` (${numbers.join(', ')})` : ''}`;
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
