// What the proxy and the relay write back: their own answers in the API's error envelope (or plain JSON), and
// successful upstream answers stripped down to status, redacted JSON body and Retry-After in seconds, always typed
// JSON and never sniffable. Nothing else from upstream (no set-cookie, no content-type, no error text) reaches the
// client. Every answer is written here, compressed as the client's Accept-Encoding asks (compressAnswer.ts).
import type { ServerResponse } from 'node:http';
import { type RefusalMark, type RelayErrorCode, retryAfterMs } from '@shop-lookup/shop-api';
import { compressAnswer, type KeptBodies } from './compressAnswer';

/** An answer ready to send. */
export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /**
   * A successful upstream answer (2xx, a code of 0 or more): the only kind shared beyond the requests waiting for it.
   */
  shareable?: boolean;
  /**
   * Sent as it is to many clients (a feed answer made once per version): compressed once per coding, and with
   * `kept`, its compressed bytes read from and kept in the relay's store for every instance.
   */
  reused?: { kept?: KeptBodies | undefined } | undefined;
}

/**
 * Body codes the proxy uses for its own answers (the API's documented meanings): `request` (-10, a bad parameter)
 * for a path it refuses as malformed or too long, which an engine reads as `bad_request`, not as a missing service.
 */
export const PROXY_CODES = {
  method: -99,
  path: -98,
  request: -10,
  gateway: -19,
  permission: -5,
  throttled: -7,
} as const;

const JSON_TYPE = 'application/json; charset=utf-8';
/** The longest Retry-After passed on (an hour): a year-long one from upstream is not a client's to keep. */
const MAX_RETRY_AFTER_S = 3600;

/**
 * The proxy's own answer as an API error envelope, so the library reads it like any API error.
 * @example envelopeAnswer(404, -98, 'NO SUCH SERVICE: /v2/auth is not served by this proxy')
 */
export function envelopeAnswer(
  status: number,
  code: number,
  msg: string,
  headers: Record<string, string> = {},
): ProxyAnswer {
  const body = Buffer.from(JSON.stringify({ msg, code, data: null }), 'utf8');
  return { status, headers: { ...headers, 'content-type': JSON_TYPE }, body };
}

/**
 * A refusal of the door (401/403, 429, 500) on one of the six API paths, in the API's envelope: -5 (permission),
 * -7 (throttled: the library waits for Retry-After), -19.
 * @example apiRefusal(429, 'too_many_requests', 'TOO MANY REQUESTS: ...', { 'retry-after': '1' })
 */
export function apiRefusal(
  status: number,
  _code: RelayErrorCode,
  message: string,
  headers: Record<string, string> = {},
): ProxyAnswer {
  const code = status === 429 ? PROXY_CODES.throttled : status >= 500 ? PROXY_CODES.gateway : PROXY_CODES.permission;
  return envelopeAnswer(status, code, message, headers);
}

/**
 * The same answer with `refusal: { code, route, by }` in its JSON body (the API envelope or the relay's error): the
 * mark the proxy and the relay put on their own 401/403/429 (the door's, not the API's), so an engine can tell "this
 * server does not let this client ask for `route`" from the shop API's own refusals.
 * @example markRefusal(apiRefusal(403, 'forbidden', 'FORBIDDEN: ...'), { code: 'forbidden', route: 'coupons', by:
 * 'relay' })
 */
export function markRefusal(answer: ProxyAnswer, refusal: RefusalMark): ProxyAnswer {
  const body = { ...(JSON.parse(answer.body.toString('utf8')) as object), refusal };
  return { ...answer, body: Buffer.from(JSON.stringify(body), 'utf8') };
}

/**
 * A JSON answer of the server's own (the relay's feed, its errors).
 * @example jsonAnswer(400, { code: 'bad_request', message: 'since must be a whole number' })
 */
export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): ProxyAnswer {
  return jsonTextAnswer(status, JSON.stringify(body), headers);
}

/** A JSON answer whose body is JSON text already made. @example jsonTextAnswer(200, '{"ok":true}') */
export function jsonTextAnswer(status: number, json: string, headers: Record<string, string> = {}): ProxyAnswer {
  return { status, headers: { ...headers, 'content-type': JSON_TYPE }, body: Buffer.from(json, 'utf8') };
}

/**
 * An upstream Retry-After as whole seconds, or undefined: never the header as received (it is upstream text).
 * @example safeRetryAfter('2.5') // '3'
 */
export function safeRetryAfter(header: string | undefined): string | undefined {
  const ms = retryAfterMs(header);
  return ms === undefined ? undefined : String(Math.min(MAX_RETRY_AFTER_S, Math.ceil(ms / 1000)));
}

/**
 * The client's copy of a successful upstream answer: its status and (redacted) JSON body, typed JSON whatever
 * upstream said (a JSON body labelled text/html is not rendered as a page).
 * @example upstreamAnswer(200, { code: 200, data }, undefined)
 */
export function upstreamAnswer(status: number, json: unknown, retryAfter: string | undefined): ProxyAnswer {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE };
  const wait = safeRetryAfter(retryAfter);
  if (wait !== undefined) headers['retry-after'] = wait;
  return { status, headers, body: Buffer.from(JSON.stringify(json), 'utf8'), shareable: status >= 200 && status < 300 };
}

/** `Vary` with the fields already set on the response (a CORS layer's `Origin`) and Accept-Encoding, once each. */
function varyOf(res: ServerResponse, own: string | undefined): string {
  const set = res.getHeader('vary');
  const fields = [...(Array.isArray(set) ? set : [String(set ?? '')]), own ?? '', 'Accept-Encoding']
    .flatMap((v) => v.split(','))
    .map((f) => f.trim())
    .filter((f) => f !== '');
  const seen = new Set<string>();
  return fields.filter((f) => !seen.has(f.toLowerCase()) && seen.add(f.toLowerCase())).join(', ');
}

const gone = (res: ServerResponse): boolean => res.destroyed || res.headersSent || res.writableEnded;

/**
 * Writes an answer with `cache-control: no-store` (unless it sets its own) and `x-content-type-options: nosniff`,
 * its body compressed as the request's Accept-Encoding asks (`vary: Accept-Encoding`), unless the client is already
 * gone. Never rejects.
 * @example await sendAnswer(res, envelopeAnswer(405, -99, 'NO SUCH METHOD: only GET', { allow: 'GET' }))
 */
export async function sendAnswer(res: ServerResponse, answer: ProxyAnswer): Promise<void> {
  if (gone(res)) return;
  const accept = (res.req as ServerResponse['req'] | undefined)?.headers['accept-encoding'];
  const { body, coding } = await compressAnswer(answer, Array.isArray(accept) ? accept.join(',') : accept);
  if (gone(res)) return;
  const { vary, ...headers } = answer.headers;
  res.writeHead(answer.status, {
    'cache-control': 'no-store',
    ...headers,
    vary: varyOf(res, vary),
    ...(coding ? { 'content-encoding': coding } : {}),
    'x-content-type-options': 'nosniff',
    'content-length': String(body.length),
  });
  res.end(body);
}
