// The shop API's documented error codes, in one list: the name the library gives each (LookupError.code), the advice a
// till shows, and the fixed words a server of ours (the relay, the proxy) says instead of the API's own text, which
// may echo the request with the key, the secret or the token in it.

import type { LookupErrorCode } from '../types';

export interface ApiCodeInfo {
  /** The stable name, e.g. `rate_limited` for -7. */
  code: LookupErrorCode;
  /** What the person at the till can do about it. */
  advice: string;
  /** A server's answer to its client: the code's own words, upper-case title first. */
  answer: string;
  /** A server's words when its own listing met it (the relay's status and logs). */
  listing: string;
}

/** Every documented negative body code. */
export const API_CODES: Readonly<Record<number, ApiCodeInfo>> = {
  [-1]: {
    code: 'bad_credentials',
    advice:
      'The shop API rejected the key/secret. Check the API key and secret (on a proxy: SHOP_API_KEY / SHOP_API_SECRET).',
    answer: 'INVALID KEY OR SECRET: the shop API refused the key/secret configured on this server; check them',
    listing: 'the shop API refused the key/secret configured on this server; check them',
  },
  [-2]: {
    code: 'token_invalid',
    advice: 'The access token was refused (expired or invalid).',
    answer:
      'INVALID ACCESS TOKEN: the shop API refused the access token of this server (renewed once); check the key/secret',
    listing: 'the shop API refused the access token, also a renewed one; check the key/secret',
  },
  [-5]: {
    code: 'permission_denied',
    advice: 'The API key lacks permission for this call. Grant it in the shop admin.',
    answer: 'NO PERMISSION: the API key configured on this server lacks permission for this call',
    listing: 'the API key configured on this server lacks permission for this call',
  },
  [-6]: {
    code: 'plan_permission',
    advice: "The shop's plan or API version does not allow this call.",
    answer: "PLAN PERMISSION: the shop's plan or API version does not allow this call",
    listing: "the shop's plan or API version does not allow this call",
  },
  [-7]: {
    code: 'rate_limited',
    advice: "The shop API's rate limit was exceeded; requests are slowed down and retried.",
    answer: "TOO MANY REQUESTS: the shop API's rate limit was reached; try again after the Retry-After delay",
    listing: "the shop API's rate limit was reached; listing resumes after its Retry-After",
  },
  [-10]: {
    code: 'bad_request',
    advice: 'The request was refused as malformed: a parameter, or a path segment (a code) too long or not allowed.',
    answer: 'INVALID PARAMETER: the shop API refused a parameter of this request',
    listing: 'the shop API refused a parameter of a listing request',
  },
  [-11]: {
    code: 'not_found',
    advice: 'The requested data does not exist.',
    answer: 'NOT FOUND: the shop API has no such data',
    listing: 'the shop API has no such data',
  },
  [-19]: {
    code: 'server_error',
    advice: 'The shop API had an internal error; it is retried later.',
    answer: 'SERVER ERROR: the shop API had an internal error; try again later',
    listing: 'the shop API had an internal error; it is listed again later',
  },
  [-98]: {
    code: 'unsupported',
    advice: 'The API has no such service.',
    answer: 'NO SUCH SERVICE: the shop API has no such service',
    listing: 'the shop API does not serve this call',
  },
  [-99]: {
    code: 'unsupported',
    advice: 'The API has no such method.',
    answer: 'NO SUCH METHOD: the shop API has no such method',
    listing: 'the shop API does not serve this call',
  },
  [-999]: {
    code: 'maintenance',
    advice: 'The shop API is under maintenance; local data is served meanwhile.',
    answer: 'MAINTENANCE: the shop API is under maintenance; try again later',
    listing: 'the shop API is under maintenance; it is listed again later',
  },
};

/**
 * A server's message for an API error answer it passes on: the code's fixed words, the numbers only otherwise.
 * @example apiCodeAnswer(-7, 429) // "TOO MANY REQUESTS: the shop API's rate limit was reached; …"
 */
export function apiCodeAnswer(code: number, status: number): string {
  return (
    API_CODES[code]?.answer ??
    `SHOP API ERROR: the shop API answered code ${code} (HTTP ${status}); its message is not passed on`
  );
}
