// Who may ask the relay command, without code: tills with a token (static or signed), the storefront routes for
// everybody when opened, operators (status, metrics) with OPS_TOKEN or from loopback. Also who a request comes
// from (a till by its name, identified; else its address's network, anonymous; behind proxies the address
// TRUST_PROXY_HOPS from the right of X-Forwarded-For), for the per-client bounds, upstream turns and the logs.
// Tokens are read from the request, never kept or logged; OPS_TOKEN guesses are bounded per client like till tokens.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { networkPrefix, type Client } from '../door/clientIdentity';
import { CLIENT_LIMITS } from '../defaults';
import { createRefusalBounds, type RefusalBounds } from '../door/refusalBounds';
import type { Authorize, RouteName } from '../types';
import { fromThisMachine } from './fromThisMachine';
import type { TillTokens, TokenRefusal } from './tillTokens';

/** The routes STOREFRONT_OPEN opens to everybody: product options, and one coupon by its exact code. */
export const STOREFRONT_ROUTES: readonly RouteName[] = ['productOptions', 'productOption', 'coupon'];

/** The cookie a browser till may carry its token in (same-origin relay), instead of the Authorization header. */
const TILL_COOKIE = 'shop_lookup_till';

/** Why a request was refused, as logs and metrics name it. */
type RefusalReason = TokenRefusal | 'ops_only';

export interface TillAccessOptions {
  tokens: TillTokens;
  storefrontOpen: boolean;
  /** Anybody may ask everything but the operators' routes. */
  public: boolean;
  /** Bearer token of the operators' routes; without it, loopback clients only. */
  opsToken: string | undefined;
  trustProxyHops: number;
  /** Told about every refusal, with the till's name when the token names one (never the token). */
  onRefused?: (event: {
    req: IncomingMessage;
    route: RouteName | 'metrics';
    reason: RefusalReason;
    till: string | null;
  }) => void;
  /** Where refused OPS_TOKEN guesses at /metrics are counted; default this process, 10 a minute per client. */
  opsRefusals?: RefusalBounds;
}

/** Whether /metrics may be answered: true; false (403); or the seconds a client past its refusals must wait (429). */
type OpsVerdict = true | false | { retryAfterS: number };

/** Who a request comes from, worked out once per request. */
interface RequestIdentity {
  /** The client's address (after TRUST_PROXY_HOPS). */
  address: string;
  /** The till its token names, when the token is valid. */
  till: string | null;
}

export interface TillAccess {
  authorize: Authorize;
  /**
   * For the relay's per-client bounds and upstream turns: `till:<name>`, identified, for a till with a valid token;
   * else `ip:<network>` (/24, /64), anonymous. Its `network` (`ip:<network>`, a till's too) is where refusals count.
   */
  clientId(req: IncomingMessage): Client;
  identify(req: IncomingMessage): RequestIdentity;
  /** Whether an operators' route (metrics, status) may be answered; tells onRefused when not. */
  mayOperate(req: IncomingMessage, route: RouteName | 'metrics'): boolean;
  /** mayOperate for /metrics with its guesses bounded per client: past them 429 before OPS_TOKEN is compared. */
  operate(req: IncomingMessage): Promise<OpsVerdict>;
}

const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * The client's address: the connecting one, or with `hops` trusted proxies, the entry that many places from the
 * right of X-Forwarded-For (each proxy appends the address it was reached from; entries further left are whatever
 * the client wrote, so they are never trusted).
 * @example clientAddress(req, 1) // '203.0.113.7' for X-Forwarded-For: 'spoofed, 203.0.113.7' through one proxy
 */
export function clientAddress(req: IncomingMessage, hops: number): string {
  const remote = req.socket.remoteAddress ?? 'unknown';
  if (hops === 0) return remote;
  const forwarded = (req.headers['x-forwarded-for'] === undefined ? [] : [req.headers['x-forwarded-for']].flat())
    .flatMap((h) => h.split(','))
    .map((a) => a.trim())
    .filter((a) => a !== '');
  const chain = [...forwarded, remote];
  return chain[Math.max(0, chain.length - 1 - hops)]!;
}

/** The till token a request carries: `Authorization: Bearer …`, or the `shop_lookup_till` cookie. */
function tokenOf(req: IncomingMessage): string | undefined {
  const auth = first(req.headers.authorization);
  const bearer = auth && /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
  if (bearer) return bearer;
  const cookie = first(req.headers.cookie);
  const match = cookie && new RegExp(`(?:^|;\\s*)${TILL_COOKIE}=([^;\\s]+)`).exec(cookie)?.[1];
  return match || undefined;
}

const MESSAGES: Record<TokenRefusal, string> = {
  no_token:
    'UNAUTHORIZED: this relay answers signed-in tills: send Authorization: Bearer <till token> (or the shop_lookup_till cookie); the shop prints one with `shop-lookup-relay token --till NAME`.',
  unknown_token: 'UNAUTHORIZED: this till token is not known here; ask the shop for a token of this relay.',
  malformed: 'UNAUTHORIZED: this till token is not one this relay issues; ask the shop for a new one.',
  bad_signature: 'UNAUTHORIZED: this till token is not signed by this relay; ask the shop for a new one.',
  expired: "UNAUTHORIZED: this till's token has expired; ask the shop for a new one.",
  wrong_shop: 'UNAUTHORIZED: this till token is for another shop; ask the shop for a token of this relay.',
};

/** A shop id as a refusal shows it (a signed token's claim: at most 64 characters, quoted). */
const shopShown = (shop: string): string => JSON.stringify(shop.length > 64 ? `${shop.slice(0, 61)}...` : shop);

/**
 * The 401's message: a token for another shop names both shops (the token's and this relay's), and how to get one
 * of this relay's (the token command with this relay's SHOP_ID).
 * @example refusalMessage('wrong_shop', 'my-shop', 'c48a01f49fd0f2cc') // 'UNAUTHORIZED: this till token is for shop
 * "my-shop", and this relay serves shop "c48a01f49fd0f2cc": …'
 */
function refusalMessage(reason: TokenRefusal, tokenShop: string | undefined, relayShop: string): string {
  if (reason !== 'wrong_shop' || tokenShop === undefined) return MESSAGES[reason];
  return (
    `UNAUTHORIZED: this till token is for shop ${shopShown(tokenShop)}, and this relay serves shop ${shopShown(relayShop)}: ` +
    `sign the till's token for this relay's shop (\`shop-lookup-relay token --till NAME\` with SHOP_ID=${relayShop}, the relay's SHOP_ID).`
  );
}

/**
 * @example const access = createTillAccess({ tokens, storefrontOpen: false, public: false, opsToken, trustProxyHops:
 * 1 }); createShopRelay({ ...o, authorize: access.authorize, clientId: access.clientId });
 */
export function createTillAccess(options: TillAccessOptions): TillAccess {
  type Seen = RequestIdentity & { refusal: TokenRefusal | null; claimed: string | null; tokenShop?: string };
  const seen = new WeakMap<IncomingMessage, Seen>();
  const opsHash = options.opsToken === undefined ? null : sha256(options.opsToken);
  const opsGuesses = options.opsRefusals ?? createRefusalBounds(CLIENT_LIMITS.refusedPerMinute);

  function look(req: IncomingMessage): Seen {
    let known = seen.get(req);
    if (!known) {
      const check = options.tokens.check(tokenOf(req));
      known = {
        address: clientAddress(req, options.trustProxyHops),
        till: check.ok ? check.till : null,
        refusal: check.ok ? null : check.reason,
        // the name a refused token claims (a signed token's payload), for the log line
        claimed: check.till,
        ...(!check.ok && check.shop !== undefined ? { tokenShop: check.shop } : {}),
      };
      seen.set(req, known);
    }
    return known;
  }

  function clientId(req: IncomingMessage): Client {
    const { till, address } = look(req);
    // refusals are counted per network for tills too: a right token is no way past the bound
    const network = `ip:${networkPrefix(address)}`;
    return till !== null
      ? { id: `till:${till}`, identified: true, network }
      : { id: network, identified: false, network };
  }

  function mayOperate(req: IncomingMessage, route: RouteName | 'metrics'): boolean {
    let ok: boolean;
    if (opsHash) {
      const auth = first(req.headers.authorization);
      const given = auth && /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
      ok = given !== undefined && given !== '' && timingSafeEqual(sha256(given), opsHash);
    } else ok = fromThisMachine(req);
    if (!ok) options.onRefused?.({ req, route, reason: 'ops_only', till: null });
    return ok;
  }

  return {
    identify: (req) => {
      const { address, till } = look(req);
      return { address, till };
    },
    clientId,
    mayOperate,
    async operate(req) {
      const id = `ip:${networkPrefix(look(req).address)}`;
      const blocked = opsGuesses.blocked(id);
      if (blocked > 0) return { retryAfterS: blocked };
      const ok = mayOperate(req, 'metrics');
      const past = ok ? await opsGuesses.admitted(id) : await opsGuesses.refused(id);
      return past > 0 ? { retryAfterS: past } : ok;
    },
    authorize(req, route) {
      if (route === 'status') {
        if (mayOperate(req, route)) return true;
        const how = opsHash ? 'send Authorization: Bearer <OPS_TOKEN>' : 'ask from this machine (or set OPS_TOKEN)';
        return { status: 403, message: `FORBIDDEN: the relay's status is for operators: ${how}.` };
      }
      if (options.public) return true;
      if (options.storefrontOpen && STOREFRONT_ROUTES.includes(route)) return true;
      const who = look(req);
      if (who.refusal === null) return true;
      options.onRefused?.({ req, route, reason: who.refusal, till: who.claimed });
      return { status: 401, message: refusalMessage(who.refusal, who.tokenShop, options.tokens.shop) };
    },
  };
}
