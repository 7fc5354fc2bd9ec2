// Who may ask: the host's authorize(req, route), or `public: true`. With neither, nothing is answered but a 401
// that says how to open the server: a server piece holding shop credentials answers only whom its host authorises.
import type { IncomingMessage } from 'node:http';
import type { ServerLog } from './serverLog';
import type { Authorize, RouteName } from './types';

/** Why a request is not let through, in words; the caller formats it (API envelope or relay error). */
export interface AccessRefusal {
  status: 401 | 403 | 500;
  message: string;
}

export interface AccessOptions {
  authorize?: Authorize | undefined;
  public?: boolean | undefined;
  /** 'createShopApiProxy' or 'createShopRelay', for the message. */
  component: string;
  /** Where a failing authorize is logged (redacted). */
  log: ServerLog;
}

/**
 * null when the request may be answered, else the refusal.
 * @example const refused = await checkAccess({ authorize, component: 'createShopRelay' }, req, 'feed');
 */
export async function checkAccess(
  options: AccessOptions,
  req: IncomingMessage,
  route: RouteName,
): Promise<AccessRefusal | null> {
  if (!options.authorize) {
    if (options.public === true) return null;
    return {
      status: 401,
      message:
        `UNAUTHORIZED: this server answers nobody yet. Its host must pass ${options.component}({ authorize: (req, route) => ... }) ` +
        'to decide who may ask (a till token, a session cookie), or public: true to answer everybody (private networks only).',
    };
  }
  let verdict: Awaited<ReturnType<Authorize>>;
  try {
    verdict = await options.authorize(req, route);
  } catch (error) {
    options.log('error', 'authorize failed', error);
    return { status: 500, message: 'AUTHORIZE FAILED: the server could not decide whether to answer; see its log.' };
  }
  if (verdict === true) return null;
  if (verdict === false) {
    return { status: 403, message: `FORBIDDEN: this client may not ask for ${route} here.` };
  }
  return { status: verdict.status === 401 ? 401 : 403, message: String(verdict.message) };
}
