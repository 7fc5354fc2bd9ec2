// Small node:http helpers shared by the API routes and the control endpoints: bodies, queries, CORS, sending.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Answer } from './envelope';

/** Bodies above this are refused: the mock only ever receives credentials and single records. */
const MAX_BODY_BYTES = 1_048_576;

/** Reads the whole request body as UTF-8; rejects above 1 MiB. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new RangeError('body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Parses a JSON or application/x-www-form-urlencoded body into an object; undefined when it is neither.
 * Without a content type, JSON is tried first, as clients of the real API send both.
 */
export function parseBody(text: string, contentType: string | undefined): Record<string, unknown> | undefined {
  const type = (contentType ?? '').toLowerCase();
  if (text.trim() === '') return undefined;
  if (!type.includes('x-www-form-urlencoded')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
      return undefined;
    } catch {
      if (type.includes('json')) return undefined;
    }
  }
  return Object.fromEntries(new URLSearchParams(text));
}

/** Splits `req.url` without normalising it (new URL() would resolve dot segments and re-encode). */
export function splitUrl(url: string | undefined): { rawPath: string; search: URLSearchParams } {
  const raw = url ?? '/';
  const at = raw.indexOf('?');
  if (at < 0) return { rawPath: raw, search: new URLSearchParams() };
  return { rawPath: raw.slice(0, at), search: new URLSearchParams(raw.slice(at + 1)) };
}

/** CORS headers: /v2 allows what the API uses; /__mock also needs DELETE. */
export function corsHeaders(area: 'shop' | 'control'): Record<string, string> {
  return {
    'access-control-allow-origin': '*',
    'access-control-allow-headers': 'access-token, content-type',
    'access-control-allow-methods': area === 'shop' ? 'GET, POST, OPTIONS' : 'GET, POST, DELETE, OPTIONS',
    'access-control-expose-headers': 'Retry-After',
    'access-control-max-age': '600',
  };
}

/** Writes an answer unless the socket is already gone (dropped, or closed while an answer was delayed). */
export function sendAnswer(res: ServerResponse, answer: Answer, extraHeaders?: Record<string, string>): void {
  if (res.destroyed || res.headersSent) return;
  const body = Buffer.from(answer.body, 'utf8');
  res.writeHead(answer.status, {
    ...extraHeaders,
    ...answer.headers,
    'content-length': String(body.length),
  });
  res.end(body);
}

/** Resolves after `ms`; immediately (no timer) for 0, so fake timers only matter when a delay is asked for. */
export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
