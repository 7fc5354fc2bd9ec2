// The door every request of the proxy and the relay passes after its route is known: the client's refusals so far
// (past their bound: 429 before authorize is asked), authorize (or public), then the client's bounds. A refused
// request is answered here and changes nothing; an admitted one gets `leave()`, to call once its answer is sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkAccess } from './access';
import { createClientBounds, DEFAULT_CLIENT_LIMITS } from './clientBounds';
import { createRefusalBounds } from './refusalBounds';
import type { ServerLog } from './serverLog';
import { markRefusal, sendAnswer, type ProxyAnswer } from './proxyAnswers';
import type { Authorize, ClientLimits, RouteName } from './types';

/** Turns a refusal into an answer in the route's own format (API envelope or relay error). */
export type RefusalFormat = (status: number, code: string, message: string, headers?: Record<string, string>) => ProxyAnswer;

export interface RequestGateOptions {
  component: string;
  authorize?: Authorize | undefined;
  public?: boolean | undefined;
  clientId?: ((req: IncomingMessage) => string) | undefined;
  clientLimits?: ClientLimits | false | undefined;
  log: ServerLog;
}

/** An admitted request: call `leave` once its answer is sent; `clientId` names its client (for its upstream turn). */
export interface Admitted {
  leave: () => void;
  clientId: string;
}

export interface RequestGate {
  /** The admitted request, or null when it was refused (and already answered). */
  admit(req: IncomingMessage, res: ServerResponse, route: RouteName, format: RefusalFormat): Promise<Admitted | null>;
  close(): void;
}

/**
 * Runs an admitted request: `work` gets a signal that fires when the client disconnects (taking its queued or
 * in-flight work with it); its answer is sent, and the client's slot freed whatever happens.
 * @example await answerAdmitted(res, leave, (gone) => forward(route, gone));
 */
export async function answerAdmitted(
  res: ServerResponse,
  leave: () => void,
  work: (clientGone: AbortSignal) => Promise<ProxyAnswer | undefined>,
): Promise<void> {
  const clientGone = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) clientGone.abort();
  };
  res.on('close', onClose);
  try {
    const answer = await work(clientGone.signal);
    if (answer) await sendAnswer(res, answer);
  } finally {
    res.off('close', onClose);
    leave();
  }
}

const remoteAddress = (req: IncomingMessage): string => req.socket.remoteAddress ?? 'unknown';

/** @example const gate = createRequestGate({ component: 'createShopRelay', public: true }); */
export function createRequestGate(options: RequestGateOptions): RequestGate {
  const bounds = createClientBounds(options.clientLimits ?? {});
  const limits = options.clientLimits;
  const refusals = createRefusalBounds(limits === false ? false : (limits?.refusedPerMinute ?? DEFAULT_CLIENT_LIMITS.refusedPerMinute));
  const clientOf = options.clientId ?? remoteAddress;
  // 'relay' or 'proxy': the word the engine shows (createShopRelay -> relay)
  const by = options.component === 'createShopRelay' ? 'relay' : 'proxy';
  return {
    async admit(req, res, route, plain) {
      // every refusal of the door says so, with the route: the engine then blames this server, never the API key
      const format: RefusalFormat = (status, code, message, headers) => {
        const answer = plain(status, code, message, headers);
        return status === 500 ? answer : markRefusal(answer, { code, route, by });
      };
      const client = clientOf(req);
      const waitS = refusals.wait(client);
      if (waitS > 0) {
        const msg = 'TOO MANY REFUSED REQUESTS: this client was refused too often (401/403) within the last minute; ' +
          'try again after the Retry-After delay.';
        sendAnswer(res, format(429, 'too_many_requests', msg, { 'retry-after': String(waitS) }));
        return null;
      }
      const refused = await checkAccess(options, req, route);
      if (refused) {
        if (refused.status !== 500) refusals.refused(client);
        const code = refused.status === 401 ? 'unauthorized' : refused.status === 403 ? 'forbidden' : 'server_error';
        sendAnswer(res, format(refused.status, code, refused.message));
        return null;
      }
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      res.once('close', onClose);
      const admission = await bounds.enter(client, gone.signal);
      res.off('close', onClose);
      if (!admission.ok) {
        const headers = { 'retry-after': String(admission.retryAfterS) };
        sendAnswer(res, format(429, 'too_many_requests', admission.message, headers));
        return null;
      }
      return { leave: admission.leave, clientId: client };
    },
    close: () => bounds.close(),
  };
}
