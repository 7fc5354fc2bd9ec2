// Who may ask which shop of the relay command in hub mode: each shop checks tokens of its own (its static tills from
// SHOPS_FILE, and signed tokens whose `shop` is that shop), so a till token of one shop never opens another; the
// shop is the one the path names. Operators' routes and requests outside /shops are checked without any till token.
import type { IncomingMessage } from 'node:http';
import { parseShopPath } from '../hub/shopPath';
import type { ShopsFileEntry } from './shopsFile';
import { createTillAccess, type TillAccess, type TillAccessOptions } from './tillAccess';
import { createTillTokens } from './tillTokens';

export interface HubAccess extends TillAccess {
  /** The access of one shop (made once per shop and SHOPS_FILE reading). */
  forShop(shopId: string): TillAccess;
  /** SHOPS_FILE was read again: each shop's static tills are the new ones. */
  replaceShops(shops: ReadonlyMap<string, ShopsFileEntry>): void;
}

export interface HubAccessOptions extends Omit<TillAccessOptions, 'tokens'> {
  shops: ReadonlyMap<string, ShopsFileEntry>;
  /** TILL_TOKEN_SECRET: signed tokens, each for the shop its `shop` names. */
  secret: string | undefined;
  basePath: string;
}

/**
 * @example const access = createHubAccess({ shops, secret, basePath: '', storefrontOpen: false, public: false,
 * opsToken, trustProxyHops: 0 });
 */
export function createHubAccess(options: HubAccessOptions): HubAccess {
  const { shops: initial, secret, basePath, ...shared } = options;
  let shops = initial;
  let perShop = new Map<string, TillAccess>();
  // no till token opens anything here: the operators' routes, and requests naming no shop
  const outside = createTillAccess({ ...shared, tokens: createTillTokens({ entries: [], shop: '' }) });

  function forShop(shopId: string): TillAccess {
    let access = perShop.get(shopId);
    if (!access) {
      const tokens = createTillTokens({ entries: shops.get(shopId)?.tills ?? [], secret, shop: shopId });
      access = createTillAccess({ ...shared, tokens });
      // kept for the shops of SHOPS_FILE only: ids a client makes up must not grow this map
      if (shops.has(shopId)) perShop.set(shopId, access);
    }
    return access;
  }
  const accessOf = (req: IncomingMessage): TillAccess => {
    const path = parseShopPath(req.url ?? '/', basePath);
    return path?.ok ? forShop(path.shopId) : outside;
  };

  return {
    forShop,
    replaceShops(next) {
      shops = next;
      perShop = new Map();
    },
    authorize: (req, route) => accessOf(req).authorize(req, route),
    clientId: (req) => accessOf(req).clientId(req),
    identify: (req) => accessOf(req).identify(req),
    mayOperate: (req, route) => outside.mayOperate(req, route),
    operate: (req) => outside.operate(req),
  };
}
