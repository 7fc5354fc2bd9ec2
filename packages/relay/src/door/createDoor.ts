// The door every request of the relay and the proxy passes, its checks written once: the mount (basePath), the URL's
// length, the path (the six API paths, and a server's own routes: the relay's relay/v1/…), the method, closed,
// ready, then the gate (refusals so far, authorize or public, the client's bounds). A refused request is answered
// here in its route's format (the API's envelope on the API paths, the server's own on its routes); an admitted one
// is served by the mode (createShopRelay, createShopApiProxy), its client's slot freed once the answer is sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { localUrl, matchAllowedPath, type AllowedRoute } from './allowedPaths';
import type { Client } from './clientIdentity';
import { apiRefusal, envelopeAnswer, PROXY_CODES, sendAnswer, type ProxyAnswer } from './proxyAnswers';
import { answerAdmitted, type RefusalFormat, type RequestGate } from './requestGate';
import type { ServerLog } from './serverLog';
import type { RouteName } from './types';

/** A server's own routes beside the six API paths, all below one prefix (the relay's `/relay`). */
export interface OwnRoutes {
  /** '/relay': with no basePath, the door claims it besides '/v2'. */
  prefix: string;
  /** By path below the mount: the route's name and the methods it answers. */
  routes: Record<string, { name: RouteName; methods: string[] }>;
  /** What the server serves there, for a "not found" answer: 'the relay serves GET relay/v1, …'. */
  served: string;
  /** The format of the answers on these routes. */
  format: RefusalFormat;
}

/** What the door let in. */
export interface DoorRequest {
  req: IncomingMessage;
  name: RouteName;
  /** One of the six API paths, or null for one of the server's own routes. */
  api: AllowedRoute | null;
  /** An own route's query, without '?'. */
  search: string;
  /** Who asked (for their upstream turn). */
  client: Client;
}

export interface DoorOptions {
  /** Where the server is mounted: '' or a normalized path such as '/shop-api'. */
  basePath: string;
  maxUrlLength: number;
  gate: RequestGate;
  log: ServerLog;
  /** Aborted once the server is closed: every request is then answered `closedAnswer`. */
  closing: AbortSignal;
  own?: OwnRoutes | undefined;
  /** What a refusal of an API path adds about the server (the relay: its own shapes; the proxy: nothing). */
  pathHint: string;
  /** Why an API path answers GET only, in the server's words. */
  methodHint: string;
  closedAnswer(format: RefusalFormat): ProxyAnswer;
  /** Before the gate: what the server needs to serve (the relay's store), or the answer when it is not there. */
  ready?: ((format: RefusalFormat) => Promise<ProxyAnswer | null>) | undefined;
  /** The answer to an admitted request; undefined when there is nobody to answer. */
  serve(request: DoorRequest, clientGone: AbortSignal): Promise<ProxyAnswer | undefined>;
  /** The answer when a request failed unexpectedly (a bug: logged, answered without details). */
  failedAnswer(): ProxyAnswer;
}

/** node:http / connect / Express / Vite middleware: with `next`, requests outside the mount go to next(). */
export type DoorHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/** @example const door = createDoor({ basePath, maxUrlLength: 2048, gate, log, closing, pathHint: '', methodHint: 'this proxy only forwards GET', closedAnswer, serve, failedAnswer }); */
export function createDoor(options: DoorOptions): DoorHandler {
  const { basePath, maxUrlLength, own } = options;
  const underOwn = (path: string): boolean => own !== undefined && (path === own.prefix || path.startsWith(`${own.prefix}/`));

  /** With no basePath the door claims '/v2…' and the own prefix; else everything under basePath. */
  function claimed(url: string): string | undefined {
    if (basePath === '' && own && new RegExp(`^${own.prefix}(?:[/?]|$)`).test(url)) return url;
    return localUrl(url, basePath);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): Promise<void> {
    const url = req.url ?? '/';
    const local = claimed(url);
    if (local === undefined) {
      if (next) return next();
      return sendAnswer(res, envelopeAnswer(404, PROXY_CODES.path, 'NO SUCH SERVICE: this path is not served here'));
    }
    const q = local.indexOf('?');
    const path = q < 0 ? local : local.slice(0, q);
    const search = q < 0 ? '' : local.slice(q + 1);
    const ownRoute = underOwn(path);
    if (url.length > maxUrlLength) {
      const msg = `URI TOO LONG: request URLs are limited to ${maxUrlLength} characters`;
      return sendAnswer(res, ownRoute ? own!.format(414, 'uri_too_long', msg) : envelopeAnswer(414, PROXY_CODES.request, msg));
    }
    let name: RouteName;
    let api: AllowedRoute | null = null;
    if (ownRoute) {
      const known = own!.routes[path];
      if (!known) return sendAnswer(res, own!.format(404, 'not_found', `NOT FOUND: ${own!.served}.`));
      if (!known.methods.includes(req.method ?? '')) {
        const msg = `METHOD NOT ALLOWED: ${req.method ?? '?'} is not allowed here; use ${known.methods.join(' or ')}.`;
        return sendAnswer(res, own!.format(405, 'method_not_allowed', msg, { allow: known.methods.join(', ') }));
      }
      name = known.name;
    } else {
      const match = matchAllowedPath(local);
      if (!match.ok) {
        // a path refused as malformed is a bad request (-10), not a missing service: an engine reads it so
        const [title, code] = match.status === 404 ? ['NO SUCH SERVICE', PROXY_CODES.path] : ['INVALID PATH', PROXY_CODES.request];
        return sendAnswer(res, envelopeAnswer(match.status, code, `${title}: ${match.reason}${options.pathHint}`));
      }
      if (req.method !== 'GET') {
        const msg = `NO SUCH METHOD: ${req.method ?? '?'} is not allowed; ${options.methodHint}`;
        return sendAnswer(res, envelopeAnswer(405, PROXY_CODES.method, msg, { allow: 'GET' }));
      }
      api = match;
      name = match.name;
    }
    const format = ownRoute ? own!.format : apiRefusal;
    if (options.closing.aborted) return sendAnswer(res, options.closedAnswer(format));
    const notReady = options.ready ? await options.ready(format) : null;
    if (notReady) return sendAnswer(res, notReady);
    const admitted = await options.gate.admit(req, res, name, format);
    if (!admitted) return;
    const { leave, client } = admitted;
    await answerAdmitted(res, leave, (clientGone) => options.serve({ req, name, api, search, client }, clientGone));
  }

  return (req, res, next) => {
    handle(req, res, next).catch((error: unknown) => {
      // only a bug gets here: logged, answered without details (they could hold anything)
      options.log('error', 'a request failed', error);
      sendAnswer(res, options.failedAnswer());
    });
  };
}
