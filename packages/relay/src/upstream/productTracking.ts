// Which products the relay lists: `POST relay/v1/products` (JSON only, so a web page cannot send it cross-site
// without a preflight the relay never answers) asks for products; a number is tracked only once the API confirmed
// that the product exists (asked in the client's own upstream turn), the shop's set is capped (409 beyond it), and a
// product no client asked for in `productTtlMs` is dropped by the sync (upstreamSync.ts). The host's `products` are
// tracked from the start and never dropped.
import type { ProductsAnswer } from '@shop-lookup/shop-api';
import type { IncomingMessage } from 'node:http';
import type { AllowedRoute } from '../door/allowedPaths';
import type { Client } from '../door/clientIdentity';
import { jsonAnswer, type ProxyAnswer } from '../door/proxyAnswers';
import type { ServerLog } from '../door/serverLog';
import { readProductsBody } from './productsBody';
import type { RelayStore } from '../store/relayStore';
import { feedError } from '../feed/serveFeed';
import { tooManyProducts } from '../store/tooManyProducts';

/** What the API said about a product: it exists, it does not, or no clear answer (try again later). */
type ProductCheck = 'exists' | 'unknown' | 'failed';

export interface ProductTrackingDeps {
  store: RelayStore;
  /** Forwards one allowed GET upstream in `client`'s turn (the relay's forwarder). */
  forward(route: AllowedRoute, client: Client): Promise<ProxyAnswer>;
  /** Products just added to the shop's set: list them now. */
  added(productNos: number[]): void;
  /** The cap of the shop's set (maxTrackedProducts). */
  max: number;
  now: () => number;
  log: ServerLog;
}

export interface ProductTracking {
  /** Answers `POST relay/v1/products`: 200, or 202 while new products are being checked. */
  post(req: IncomingMessage, client: Client): Promise<ProxyAnswer>;
  /** Answers `GET relay/v1/products`. */
  list(): Promise<ProxyAnswer>;
}

/** `application/json`, with or without parameters (`; charset=utf-8`). */
const isJson = (type: string | undefined): boolean => type?.split(';')[0]?.trim().toLowerCase() === 'application/json';

/** @example const products = createProductTracking({ store, forward, added, max: 100, now, log }); */
export function createProductTracking(deps: ProductTrackingDeps): ProductTracking {
  const { store } = deps;

  /** Whether the API knows the product: one look at its first option (a made-up number answers -11). */
  async function check(no: number, client: Client): Promise<ProductCheck> {
    const route: AllowedRoute = {
      ok: true,
      path: `/v2/shop/products/${no}/options`,
      query: '?offset=1&limit=1',
      cls: 'list',
      name: 'productOptions',
    };
    const answer = await deps.forward(route, client);
    if (answer.shareable) return 'exists';
    try {
      return (JSON.parse(answer.body.toString('utf8')) as { code?: unknown }).code === -11 ? 'unknown' : 'failed';
    } catch {
      return 'failed';
    }
  }
  /** Products being checked in this instance, each for the client that asked. */
  const pending = new Map<number, Client>();

  const answer = async (status: number): Promise<ProxyAnswer> => {
    const body: ProductsAnswer = {
      products: await store.trackedProducts(),
      pending: [...pending.keys()].sort((a, b) => a - b),
    };
    return jsonAnswer(status, body);
  };

  /** Checks one client's new products one after the other (its turn holds one of them at a time). */
  async function confirm(productNos: number[], client: Client): Promise<void> {
    for (const no of productNos) {
      try {
        const found = await check(no, client);
        if (found === 'exists') {
          const added = await store.trackProducts([no], { at: deps.now(), max: deps.max });
          if (added.length > 0) deps.added(added);
        } else if (found === 'failed') {
          deps.log(
            'warn',
            `product ${no} could not be checked with the shop API now; it is tracked once a till asks for it again`,
          );
        }
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code === 'too_many_products')
          deps.log('warn', `product ${no} was not tracked: the shop's set is full (maxTrackedProducts ${deps.max})`);
        else deps.log('error', `tracking product ${no} failed`, error);
      } finally {
        pending.delete(no);
      }
    }
  }

  return {
    async post(req, client) {
      if (!isJson(req.headers['content-type'])) {
        req.resume(); // the body is not read: let it drain
        return feedError(
          415,
          'unsupported_media_type',
          'UNSUPPORTED MEDIA TYPE: send { "products": [13801, 13805] } with Content-Type: application/json.',
        );
      }
      const body = await readProductsBody(req);
      if (typeof body === 'string') return feedError(400, 'bad_request', `BAD REQUEST: ${body}.`);
      const tracked = new Set(await store.trackedProducts());
      const known = body.filter((no) => tracked.has(no));
      // asked for again: its time to be dropped starts anew
      if (known.length > 0) await store.trackProducts(known, { at: deps.now() });
      const fresh = body.filter((no) => !tracked.has(no) && !pending.has(no));
      if (fresh.length === 0) return answer(200);
      if (tracked.size + pending.size + fresh.length > deps.max) {
        const error = tooManyProducts(deps.max, tracked.size + pending.size);
        return feedError(409, 'too_many_products', error.message);
      }
      for (const no of fresh) pending.set(no, client);
      void confirm(fresh, client);
      return answer(202);
    },
    list: () => answer(200),
  };
}
