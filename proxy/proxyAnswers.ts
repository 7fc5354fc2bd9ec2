// What the proxy writes back: its own answers in the API's error envelope, and upstream answers stripped down to
// status, body, content-type and Retry-After. Nothing else from upstream (no set-cookie) reaches the client.
import type { ServerResponse } from 'node:http';

/** An answer ready to send. */
export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Body codes the proxy uses for its own answers (the API's documented meanings). */
export const PROXY_CODES = { method: -99, path: -98, gateway: -19 } as const;

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
 * The client's copy of an upstream answer: status and body as received, content-type, Retry-After, no-store.
 * @example sendAnswer(res, upstreamAnswer({ status: 200, contentType: 'application/json', retryAfter: undefined, body }))
 */
export function upstreamAnswer(parts: UpstreamAnswerParts): ProxyAnswer {
  const headers: Record<string, string> = {};
  if (parts.contentType) headers['content-type'] = parts.contentType;
  if (parts.retryAfter) headers['retry-after'] = parts.retryAfter;
  return { status: parts.status, headers, body: parts.body };
}

/**
 * Writes an answer with `cache-control: no-store`, unless the client is already gone.
 * @example sendAnswer(res, envelopeAnswer(405, -99, 'NO SUCH METHOD: only GET', { allow: 'GET' }))
 */
export function sendAnswer(res: ServerResponse, answer: ProxyAnswer): void {
  if (res.destroyed || res.headersSent || res.writableEnded) return;
  res.writeHead(answer.status, {
    ...answer.headers,
    'cache-control': 'no-store',
    'content-length': String(answer.body.length),
  });
  res.end(answer.body);
}
