// The operators' routes of the relay command, outside BASE_PATH and outside the tills' authorize: GET /healthz (the
// process answers), GET /readyz (the store answers and a snapshot is loaded; 503 with the reason otherwise), and
// GET /metrics (Prometheus text; OPS_TOKEN or loopback). None of them shows any of the shop's data.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RelayStatus } from '../types';

export type OpsRoute = 'healthz' | 'readyz' | 'metrics';

const OPS_PATHS: Record<string, OpsRoute> = { '/healthz': 'healthz', '/readyz': 'readyz', '/metrics': 'metrics' };

/** The operators' route a request URL names, or null. @example opsRouteOf('/readyz?verbose=1') // 'readyz' */
export function opsRouteOf(url: string | undefined): OpsRoute | null {
  const path = (url ?? '/').split('?')[0]!;
  return OPS_PATHS[path] ?? null;
}

/** What readiness is made of, as the server knows it. */
export interface ReadinessInputs {
  stopping: boolean;
  /** The relay's start failed or is under way (null: started). */
  starting: string | null;
  /** The store's health as last reported (Redis lost: its error). */
  storeError: string | null;
  status: RelayStatus | null;
  /** Hub mode: no one snapshot to wait for (each shop is listed when due; its own relay/v1/status tells). */
  hub?: boolean;
}

/**
 * Why the relay is not ready, or null when it is.
 * @example notReadyReason({ stopping: false, starting: null, storeError: null, status }) // null
 */
export function notReadyReason(r: ReadinessInputs): string | null {
  if (r.stopping) return 'shutting down';
  if (r.starting !== null) return r.starting;
  // the store's own error names its host and port: that is for the log, not for whoever asks /readyz
  if (r.storeError !== null) return 'the store is unreachable (its error is in the log)';
  if (r.hub) return null;
  if (r.status === null) return 'starting';
  if (r.status.confirmedAt.coupons === undefined)
    return 'no snapshot loaded yet: the first listing of the coupons has not completed';
  return null;
}

export interface OpsRoutesDeps {
  readiness(): Promise<ReadinessInputs>;
  /** Whether /metrics may be answered: true; false (403); or the seconds to wait (429: OPS_TOKEN guessed too often). */
  mayOperate(req: IncomingMessage): Promise<boolean | { retryAfterS: number }>;
  scrape(): Promise<{ text: string; contentType: string }>;
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  type: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void =>
  send(res, status, JSON.stringify(body), 'application/json; charset=utf-8', headers);

/**
 * Answers one operators' route.
 * @example const route = opsRouteOf(req.url); if (route) return serveOps(route, req, res, deps);
 */
export async function serveOps(
  route: OpsRoute,
  req: IncomingMessage,
  res: ServerResponse,
  deps: OpsRoutesDeps,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return json(
      res,
      405,
      { code: 'method_not_allowed', message: `METHOD NOT ALLOWED: /${route} answers GET.` },
      { allow: 'GET, HEAD' },
    );
  }
  switch (route) {
    case 'healthz':
      return json(res, 200, { ok: true });
    case 'readyz': {
      const reason = notReadyReason(await deps.readiness());
      return reason === null
        ? json(res, 200, { ready: true })
        : json(res, 503, { ready: false, reason }, { 'retry-after': '5' });
    }
    case 'metrics': {
      const may = await deps.mayOperate(req);
      if (typeof may === 'object') {
        const message =
          'TOO MANY REFUSED REQUESTS: this client was refused too often within the last minute; try again after the Retry-After delay.';
        return json(res, 429, { code: 'too_many_requests', message }, { 'retry-after': String(may.retryAfterS) });
      }
      if (!may) {
        return json(res, 403, {
          code: 'forbidden',
          message:
            'FORBIDDEN: /metrics is for operators: send Authorization: Bearer <OPS_TOKEN> (or ask from this machine when OPS_TOKEN is not set).',
        });
      }
      const { text, contentType } = await deps.scrape();
      return send(res, 200, text, contentType);
    }
  }
}
