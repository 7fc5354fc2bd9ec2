// The operators' routes of the relay command, outside BASE_PATH and outside the tills' authorize: GET /healthz (the
// process answers), GET /readyz (the store answers and a snapshot is loaded; 503 with the reason otherwise),
// GET /metrics (Prometheus text), and the tills' uses of issued coupons: GET /ops/uses (list) and POST
// /ops/uses/drop (drop a till's or a code's, logged with who asked). The last three: OPS_TOKEN or loopback. Only the
// uses routes show any of the shop's data (the uses, for the operator who drops them).
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ErrorAnswer,
  type OpsDropAnswer,
  opsDropSchema,
  type OpsUsesAnswer,
  readWire,
  type RelayErrorCode,
  type UsesRecord,
} from '@shop-lookup/shop-api';
import { readJsonBody } from '../door/jsonBody';
import type { RelayStatus } from '../types';

export type OpsRoute = 'healthz' | 'readyz' | 'metrics' | 'uses' | 'dropUses';

const OPS_PATHS: Record<string, OpsRoute> = {
  '/healthz': 'healthz',
  '/readyz': 'readyz',
  '/metrics': 'metrics',
  '/ops/uses': 'uses',
  '/ops/uses/drop': 'dropUses',
};
/** The method each route answers (HEAD too where GET). */
const METHODS: Record<OpsRoute, 'GET' | 'POST'> = {
  healthz: 'GET',
  readyz: 'GET',
  metrics: 'GET',
  uses: 'GET',
  dropUses: 'POST',
};
/** A drop's body, at most. */
const DROP_BODY_BYTES = 64 * 1024;

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

/** One shop's uses, for the operators' routes (hub mode: the shop named by `?shop=` or the body's `shop`). */
interface OpsUses {
  list(shop: string | null, filter: { till?: string; codes?: string[]; limit?: number }): Promise<UsesRecord[]>;
  drop(shop: string | null, filter: { till?: string; codes?: string[] }, by: string): Promise<OpsDropAnswer>;
}

export interface OpsRoutesDeps {
  readiness(): Promise<ReadinessInputs>;
  /**
   * Whether /metrics (and the uses routes) may be answered: true; false (403); or the seconds to wait (429: OPS_TOKEN
   * guessed too often).
   */
  mayOperate(req: IncomingMessage): Promise<boolean | { retryAfterS: number }>;
  scrape(): Promise<{ text: string; contentType: string }>;
  uses?: OpsUses;
  /** Who asked, for the log line of a drop (the client's address). */
  who?(req: IncomingMessage): string;
}

/** A filter's till, codes and shop from a query or a body (opsDropSchema); a string naming what is wrong. */
function readFilter(v: unknown): { till?: string; codes?: string[]; shop: string | null } | string {
  const read = readWire(opsDropSchema, v, 'the body');
  if (!read.ok) return read.why;
  const { till, codes, shop } = read.value;
  return { ...(till !== undefined ? { till } : {}), ...(codes !== undefined ? { codes } : {}), shop: shop ?? null };
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
/** An error answer of the relay's (`{ code, message }`). */
const errorAnswer = (
  res: ServerResponse,
  status: number,
  code: RelayErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void => json(res, status, { code, message } satisfies ErrorAnswer, headers);

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
  const method = METHODS[route];
  if (method === 'GET' ? req.method !== 'GET' && req.method !== 'HEAD' : req.method !== method) {
    req.resume();
    return errorAnswer(res, 405, 'method_not_allowed', `METHOD NOT ALLOWED: ${pathOf(route)} answers ${method}.`, {
      allow: method === 'GET' ? 'GET, HEAD' : method,
    });
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
    default: {
      const may = await deps.mayOperate(req);
      if (typeof may === 'object') {
        req.resume();
        const message =
          'TOO MANY REFUSED REQUESTS: this client was refused too often within the last minute; try again after the Retry-After delay.';
        return errorAnswer(res, 429, 'too_many_requests', message, { 'retry-after': String(may.retryAfterS) });
      }
      if (!may) {
        req.resume();
        return errorAnswer(
          res,
          403,
          'forbidden',
          `FORBIDDEN: ${pathOf(route)} is for operators: send Authorization: Bearer <OPS_TOKEN> (or ask from this machine when OPS_TOKEN is not set).`,
        );
      }
      if (route === 'metrics') {
        const { text, contentType } = await deps.scrape();
        return send(res, 200, text, contentType);
      }
      return serveUses(route, req, res, deps);
    }
  }
}

const pathOf = (route: OpsRoute): string => Object.entries(OPS_PATHS).find(([, r]) => r === route)![0];

/** GET /ops/uses?till=&code=&code=&limit=&shop=, POST /ops/uses/drop { till?, codes?, shop? } (an operator's). */
async function serveUses(route: 'uses' | 'dropUses', req: IncomingMessage, res: ServerResponse, deps: OpsRoutesDeps) {
  const bad = (why: string) => errorAnswer(res, 400, 'bad_request', `BAD REQUEST: ${why}.`);
  if (!deps.uses) return errorAnswer(res, 503, 'relay_unavailable', 'RELAY UNAVAILABLE: the relay is starting.');
  try {
    if (route === 'uses') {
      const query = new URL(req.url ?? '/', 'http://relay').searchParams;
      const codes = query.getAll('code');
      const filter = readFilter({
        till: query.get('till') ?? undefined,
        codes: codes.length > 0 ? codes : undefined,
        shop: query.get('shop') ?? undefined,
      });
      if (typeof filter === 'string') return bad(filter);
      const limit = Number(query.get('limit') ?? 1_000);
      if (!Number.isSafeInteger(limit) || limit < 1) return bad('limit must be a whole number of at least 1');
      const { shop, ...rest } = filter;
      const answer: OpsUsesAnswer = { uses: await deps.uses.list(shop, { ...rest, limit }) };
      return json(res, 200, answer);
    }
    const body = await readJsonBody(
      req,
      DROP_BODY_BYTES,
      `the body must be at most ${DROP_BODY_BYTES} bytes`,
      'the body must be JSON: { "till"?: "…", "codes"?: [ … ] }',
    );
    if (!body.ok) return bad(body.why);
    const filter = readFilter(body.value);
    if (typeof filter === 'string') return bad(filter);
    const { shop, ...rest } = filter;
    if (rest.till === undefined && (rest.codes?.length ?? 0) === 0)
      return bad('name the till, the codes, or both, whose uses to drop');
    const dropped: OpsDropAnswer = await deps.uses.drop(shop, rest, `operator ${deps.who?.(req) ?? 'unknown'}`);
    return json(res, 200, dropped);
  } catch (error) {
    const message = (error as Error)?.message ?? '';
    if (/^name the shop/.test(message)) return bad(message);
    if (/no shop/.test(message)) return errorAnswer(res, 404, 'unknown_shop', `NO SUCH SHOP: ${message}.`);
    if (/starting/.test(message))
      return errorAnswer(res, 503, 'relay_unavailable', 'RELAY UNAVAILABLE: the relay is starting.');
    throw error;
  }
}
