// The relay's discovery answer (GET {basePath}/relay/v1): what a relay says about itself and which of its routes
// this very request may use. The relay builds it as a DiscoveryAnswer; the engine reads it with the same schema.
import * as z from 'zod/mini';

/** The feed protocol's version: a discovery answer of another is not a relay this engine can sync from. */
export const RELAY_PROTOCOL = 1;

/**
 * The relay's own routes below its basePath, as discovery names them (no leading slash).
 * @example `${baseUrl}/${RELAY_PATHS.feed}?since=12&handle=${handle}`
 */
export const RELAY_PATHS = {
  discovery: 'relay/v1',
  feed: 'relay/v1/feed',
  products: 'relay/v1/products',
  status: 'relay/v1/status',
  uses: 'relay/v1/uses',
} as const;

/**
 * The discovery answer. Read by an engine, `shop` and `routes` may be missing (read as `''` and `null`: not said,
 * every route); the relay always sends them.
 * @example z.parse(discoveryAnswerSchema, await res.json()).routes // ['coupon', 'productOptions', …]
 */
export const discoveryAnswerSchema = z.object({
  relay: z.literal('shop-lookup'),
  protocol: z.literal(RELAY_PROTOCOL),
  /** The shop the relay serves (its `shopId`): the engine's database identity check uses it. */
  shop: z._default(z.string(), ''),
  feed: z._default(z.string(), RELAY_PATHS.feed),
  products: z._default(z.string(), RELAY_PATHS.products),
  uses: z._default(z.string(), RELAY_PATHS.uses),
  /** The routes this request may use, as the relay's authorize answered route by route; null: not said (all). */
  routes: z._default(z.nullable(z.array(z.string())), null),
});

/** The discovery answer as the relay sends it (every field) and as the engine reads it. */
export type DiscoveryAnswer = z.output<typeof discoveryAnswerSchema>;
