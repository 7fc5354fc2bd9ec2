// The door every request of the relay and the proxy passes, its checks written once: the mount (basePath), the URL's
// length, the path (the six API paths, and a server's own routes: the relay's relay/v1/…), the method (nameRoute.ts),
// closed, ready, then the gate (refusals so far, authorize or public, the client's bounds). A refused request is
// answered here in its route's format (the API's envelope on the API paths, the server's own on its routes); an
// admitted one is served by the mode (createShopRelay, createShopApiProxy), its client's slot freed once the answer
// is sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { localUrl, type AllowedRoute } from './allowedPaths';
import type { Client } from './clientIdentity';
import type { Cors } from './cors';
import { corsRouteOf, nameRoute, type ServedRoutes } from './nameRoute';
import { envelopeAnswer, PROXY_CODES, sendAnswer, type ProxyAnswer } from './proxyAnswers';
import { answerAdmitted, type RefusalFormat, type RequestGate } from './requestGate';
import type { ServerLog } from './serverLog';
import type { RouteName } from './types';

/** What the door let in. */
interface DoorRequest {
  req: IncomingMessage;
  name: RouteName;
  /** One of the six API paths, or null for one of the server's own routes. */
  api: AllowedRoute | null;
  /** An own route's query, without '?'. */
  search: string;
  /** Who asked (for their upstream turn). */
  client: Client;
}

export interface DoorOptions extends ServedRoutes {
  /** Where the server is mounted: '' or a normalized path such as '/shop-api'. */
  basePath: string;
  gate: RequestGate;
  log: ServerLog;
  /** Aborted once the server is closed: every request is then answered `closedAnswer`. */
  closing: AbortSignal;
  closedAnswer(format: RefusalFormat): ProxyAnswer;
  /** Before the gate: what the server needs to serve (the relay's store), or the answer when it is not there. */
  ready?: ((format: RefusalFormat) => Promise<ProxyAnswer | null>) | undefined;
  /** The answer to an admitted request; undefined when there is nobody to answer. */
  serve(request: DoorRequest, clientGone: AbortSignal): Promise<ProxyAnswer | undefined>;
  /** The answer when a request failed unexpectedly (a bug: logged, answered without details). */
  failedAnswer(): ProxyAnswer;
  /** Cross-origin answers (cors.ts): the headers of every answer under the mount, and the preflights. */
  cors?: Cors | undefined;
}

/** node:http / connect / Express / Vite middleware: with `next`, requests outside the mount go to next(). */
export type DoorHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/**
 * @example const door = createDoor({ basePath, maxUrlLength: 2048, gate, log, closing, pathHint: '', methodHint:
 * 'this proxy only forwards GET', closedAnswer, serve, failedAnswer });
 */
export function createDoor(options: DoorOptions): DoorHandler {
  const { basePath, own } = options;

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
      // (readable by a listed origin: a till whose baseUrl misses the mount reads a 404, not a failed request)
      if (options.cors?.(req, res, undefined)) return;
      return sendAnswer(res, envelopeAnswer(404, PROXY_CODES.path, 'NO SUCH SERVICE: this path is not served here'));
    }
    // every answer from here on carries its CORS headers, refusals too; a preflight is answered there
    if (options.cors?.(req, res, corsRouteOf(options, local))) return;
    const route = nameRoute(options, local, req.method, url.length);
    if (!route.ok) return sendAnswer(res, route.answer);
    const { name, api, search, format } = route;
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
