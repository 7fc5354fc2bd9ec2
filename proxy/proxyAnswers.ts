// What the proxy and the relay write back: their own answers in the API's error envelope (or plain JSON), and
// upstream answers stripped down to status, body and Retry-After, always typed JSON and never sniffable. Nothing
// else from upstream (no set-cookie, no content-type) reaches the client.
import type { ServerResponse } from 'node:http';

/** An answer ready to send. */
export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Body codes the proxy uses for its own answers (the API's documented meanings). */
export const PROXY_CODES = { method: -99, path: -98, gateway: -19, permission: -5, throttled: -7 } as const;

const JSON_TYPE = 'application/json; charset=utf-8';

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
export function apiRefusal(status: number, _code: string, message: string, headers: Record<string, string> = {}): ProxyAnswer {
  const code = status === 429 ? PROXY_CODES.throttled : status >= 500 ? PROXY_CODES.gateway : PROXY_CODES.permission;
  return envelopeAnswer(status, code, message, headers);
}

/**
 * A JSON answer of the server's own (the relay's feed, its errors).
 * @example jsonAnswer(400, { code: 'bad_request', message: 'since must be a whole number' })
 */
export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): ProxyAnswer {
  return { status, headers: { ...headers, 'content-type': JSON_TYPE }, body: Buffer.from(JSON.stringify(body), 'utf8') };
}

/**
 * Replaces every occurrence of the given secrets (too short ones are ignored: they would hit ordinary text).
 * @example redact('bad secret s3cr3t-value', ['s3cr3t-value']) // 'bad secret [redacted]'
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 6) out = out.split(secret).join('[redacted]');
  }
  return out;
}

/**
 * The same bytes, unless one of the secrets occurs in them (an upstream error echoing the token, say).
 * @example scrubBody(Buffer.from('{"msg":"token abc123def expired"}'), ['abc123def'])
 */
export function scrubBody(body: Buffer, secrets: readonly (string | undefined)[]): Buffer {
  const leaks = secrets.some((secret) => secret && secret.length >= 6 && body.includes(secret, 0, 'utf8'));
  return leaks ? Buffer.from(redact(body.toString('utf8'), secrets), 'utf8') : body;
}

/** What came back from upstream, as far as the client may see it. */
export interface UpstreamAnswerParts {
  status: number;
  contentType: string | undefined;
  retryAfter: string | undefined;
  body: Buffer;
}

/**
 * The client's copy of an upstream answer whose body is JSON: status and body as received, Retry-After, typed JSON
 * whatever upstream said (a JSON body labelled text/html is not rendered as a page).
 * @example sendAnswer(res, upstreamAnswer({ status: 200, contentType: 'application/json', retryAfter: undefined, body }))
 */
export function upstreamAnswer(parts: UpstreamAnswerParts): ProxyAnswer {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE };
  if (parts.retryAfter) headers['retry-after'] = parts.retryAfter;
  return { status: parts.status, headers, body: parts.body };
}

/**
 * Writes an answer with `cache-control: no-store` (unless it sets its own) and `x-content-type-options: nosniff`,
 * unless the client is already gone.
 * @example sendAnswer(res, envelopeAnswer(405, -99, 'NO SUCH METHOD: only GET', { allow: 'GET' }))
 */
export function sendAnswer(res: ServerResponse, answer: ProxyAnswer): void {
  if (res.destroyed || res.headersSent || res.writableEnded) return;
  res.writeHead(answer.status, {
    'cache-control': 'no-store',
    ...answer.headers,
    'x-content-type-options': 'nosniff',
    'content-length': String(answer.body.length),
  });
  res.end(answer.body);
}
