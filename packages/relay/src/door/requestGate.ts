// The door every request of the proxy and the relay passes after its route is known: the hearing (the refusals of the
// client's network so far: past their bound 429 before authorize is asked; authorize or public; a refusal counted), then the
// client's bounds. A refused request is answered here and changes nothing; an admitted one gets `leave()`, to call
// once its answer is sent. A hub holds the hearing itself, before any shop is opened (hearRequest).
import type { RelayErrorCode } from '@shop-lookup/shop-api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkAccess, type AccessOptions } from './access';
import { CLIENT_LIMITS } from '../defaults';
import { createClientBounds } from './clientBounds';
import { clientResolver, type Client } from './clientIdentity';
import { createRefusalBounds, type RefusalBounds } from './refusalBounds';
import type { ServerLog } from './serverLog';
import { markRefusal, sendAnswer, type ProxyAnswer } from './proxyAnswers';
import type { Authorize, ClientId, ClientLimits, RouteName } from './types';

/** Turns a refusal into an answer in the route's own format (API envelope or relay error). */
export type RefusalFormat = (
  status: number,
  code: RelayErrorCode,
  message: string,
  headers?: Record<string, string>,
) => ProxyAnswer;

export interface RequestGateOptions {
  component: string;
  authorize?: Authorize | undefined;
  public?: boolean | undefined;
  clientId?: ((req: IncomingMessage) => ClientId) | undefined;
  clientLimits?: ClientLimits | false | undefined;
  log: ServerLog;
  /**
   * Where refusals are counted: read for every request (the relay's store's once it is open: shared by its
   * instances); default this process's count of `refusedPerMinute`.
   */
  refusals?: (() => RefusalBounds | undefined) | undefined;
}

/** An admitted request: call `leave` once its answer is sent; `client` names its client (for its upstream turn). */
interface Admitted {
  leave: () => void;
  client: Client;
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

/**
 * Every refusal of the door says so, with the route: the engine then blames this server, never the API key.
 * @example const format = markedRefusals(apiRefusal, 'coupon', 'relay');
 */
export function markedRefusals(plain: RefusalFormat, route: RouteName, by: string): RefusalFormat {
  return (status, code, message, headers) => {
    const answer = plain(status, code, message, headers);
    return status === 500 ? answer : markRefusal(answer, { code, route, by });
  };
}

/** What a hearing decided: heard (the client may go on), or the answer that refuses it. */
export type Hearing = { ok: true; client: Client } | { ok: false; answer: ProxyAnswer };

export interface HearingOptions {
  access: AccessOptions;
  refusals: RefusalBounds;
}

/** 429 to a client past its bound of refusals, with the seconds it must wait. @example tooManyRefused(apiRefusal, 6) */
export const tooManyRefused = (format: RefusalFormat, waitS: number): ProxyAnswer =>
  format(
    429,
    'too_many_requests',
    'TOO MANY REFUSED REQUESTS: this client was refused too often (401/403) within the last minute; try again after the Retry-After delay.',
    { 'retry-after': String(waitS) },
  );

/**
 * The client's refusals so far (past the bound: 429, authorize not asked), then authorize; a refusal is counted, and
 * an admitted client found past its bound (by another instance's count) is answered 429 as well.
 * @example const heard = await hearRequest({ access, refusals }, req, client, 'coupon', format);
 */
export async function hearRequest(
  options: HearingOptions,
  req: IncomingMessage,
  client: Client,
  route: RouteName,
  format: RefusalFormat,
): Promise<Hearing> {
  const { refusals } = options;
  // counted per network, whatever the token says: a right token past the bound is refused like a wrong one
  const network = client.network ?? client.id;
  const blocked = refusals.blocked(network);
  if (blocked > 0) return { ok: false, answer: tooManyRefused(format, blocked) };
  const refused = await checkAccess(options.access, req, route);
  if (refused) {
    const past = refused.status === 500 ? 0 : await refusals.refused(network);
    if (past > 0) return { ok: false, answer: tooManyRefused(format, past) };
    const code = refused.status === 401 ? 'unauthorized' : refused.status === 403 ? 'forbidden' : 'server_error';
    return { ok: false, answer: format(refused.status, code, refused.message) };
  }
  const past = await refusals.admitted(network);
  if (past > 0) return { ok: false, answer: tooManyRefused(format, past) };
  return { ok: true, client };
}

/** @example const gate = createRequestGate({ component: 'createShopRelay', public: true }); */
export function createRequestGate(options: RequestGateOptions): RequestGate {
  const bounds = createClientBounds(options.clientLimits ?? {});
  const limits = options.clientLimits;
  const own = createRefusalBounds(
    limits === false ? false : (limits?.refusedPerMinute ?? CLIENT_LIMITS.refusedPerMinute),
  );
  const refusals = (): RefusalBounds => options.refusals?.() ?? own;
  const clientOf = clientResolver(options.clientId);
  const access: AccessOptions = {
    authorize: options.authorize,
    public: options.public,
    component: options.component,
    log: options.log,
  };
  // 'relay' or 'proxy': the word the engine shows (createShopRelay -> relay)
  const by = options.component === 'createShopRelay' ? 'relay' : 'proxy';
  return {
    async admit(req, res, route, plain) {
      const format = markedRefusals(plain, route, by);
      const heard = await hearRequest({ access, refusals: refusals() }, req, clientOf(req), route, format);
      if (!heard.ok) {
        sendAnswer(res, heard.answer);
        return null;
      }
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      res.once('close', onClose);
      const admission = await bounds.enter(heard.client.id, gone.signal);
      res.off('close', onClose);
      if (!admission.ok) {
        const headers = { 'retry-after': String(admission.retryAfterS) };
        sendAnswer(res, format(429, 'too_many_requests', admission.message, headers));
        return null;
      }
      return { leave: admission.leave, client: heard.client };
    },
    close: () => bounds.close(),
  };
}
