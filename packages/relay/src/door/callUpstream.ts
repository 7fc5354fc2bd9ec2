// One HTTP exchange with the shop API, with a timeout and a caller's abort signal, turned into data: an answer
// (whatever its status), or why there was none. Bodies are read whole: API answers are at most one page of 100 rows.
import { readApiCode } from '@shop-lookup/shop-api';
import { networkReason } from './upstreamErrors';

/** What one upstream exchange gave. */
export type UpstreamResult =
  | {
      kind: 'answer';
      status: number;
      contentType: string | undefined;
      retryAfter: string | undefined;
      body: Buffer;
      /** The envelope's `code` when the body is a JSON envelope. */
      code: number | undefined;
      /** The parsed body when it is a JSON object (the auth answer is read from it). */
      json: Record<string, unknown> | undefined;
    }
  /** `reason`: the network error's code (ECONNREFUSED), never its message (which may name the URL). */
  | { kind: 'unreachable'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'aborted' };

export interface UpstreamCallDeps {
  fetch: typeof fetch;
  timeoutMs: number;
}

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sends one request. Redirects are not followed (the token must not travel to another origin).
 * @example const result = await callUpstream({ fetch, timeoutMs: 15_000 }, { url, method: 'GET', headers }, signal);
 */
export async function callUpstream(
  deps: UpstreamCallDeps,
  request: UpstreamRequest,
  signal?: AbortSignal,
): Promise<UpstreamResult> {
  if (signal?.aborted) return { kind: 'aborted' };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`upstream timeout after ${deps.timeoutMs} ms`));
  }, deps.timeoutMs);
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const init: RequestInit = {
      method: request.method,
      headers: request.headers,
      signal: controller.signal,
      redirect: 'manual',
    };
    if (request.body !== undefined) init.body = request.body;
    const res = await deps.fetch(request.url, init);
    // The timeout covers the body too: a connection that stalls mid-body is a timeout, not a hang.
    const body = Buffer.from(await res.arrayBuffer());
    const json = parseJson(body);
    return {
      kind: 'answer',
      status: res.status,
      contentType: res.headers.get('content-type') ?? undefined,
      retryAfter: res.headers.get('retry-after') ?? undefined,
      body,
      code: readApiCode(json?.code) ?? undefined,
      json,
    };
  } catch (error) {
    if (timedOut) return { kind: 'timeout' };
    if (signal?.aborted) return { kind: 'aborted' };
    return { kind: 'unreachable', reason: networkReason(error) };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

