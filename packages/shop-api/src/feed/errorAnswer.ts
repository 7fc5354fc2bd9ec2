// The error answer of the relay's own routes (`{ code, message }`, with a fitting status) and the refusal mark
// its door (and the proxy's) puts on a 401/403/429, on those routes and in the API's envelope on the six API paths:
// who refused which route, so an engine blames that server, never the shop's API key. The relay answers an
// ErrorAnswer of a RelayErrorCode; the engine reads it with errorAnswerSchema (any code: a newer relay may have more).
import * as z from 'zod/mini';

/**
 * Every code a relay's (or a hub's, or the relay command's) error answer carries; docs/errors.md lists each.
 * @example RELAY_ERROR_CODES.includes('must_refetch') // true
 */
export const RELAY_ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'too_many_requests',
  'unsupported_media_type',
  'too_many_products',
  'uses_full',
  'till_uses_full',
  'not_found',
  'method_not_allowed',
  'uri_too_long',
  'must_refetch',
  'relay_unavailable',
  'relay_not_ready',
  'relay_busy',
  'relay_closed',
  'relay_starting',
  'unknown_shop',
  'shop_unavailable',
  'server_error',
] as const;

/** A code of the relay's error answers. */
export type RelayErrorCode = (typeof RELAY_ERROR_CODES)[number];

/**
 * Who refused and what: `{ code, route, by }` on the door's own 401/403/429 (never on an answer of the shop API
 * passed on).
 * @example { code: 'forbidden', route: 'coupons', by: 'relay' }
 */
export const refusalMarkSchema = z.object({
  /** `unauthorized`, `forbidden` or `too_many_requests`. */
  code: z.string(),
  /** The route refused (`coupons`, `feed`, `uses`, …: the relay's RouteName). */
  route: z.string(),
  /** `'relay'` or `'proxy'`. */
  by: z.string(),
});

/**
 * An error answer of the relay's own routes. `code` is read as any text (a newer relay may have a code this engine
 * does not know: its message still tells).
 * @example z.safeParse(errorAnswerSchema, json).data?.code === 'must_refetch'
 */
export const errorAnswerSchema = z.object({
  code: z.string(),
  /** Words a person can act on (never upstream text). */
  message: z.string(),
  refusal: z.optional(refusalMarkSchema),
});

/** Who refused and what. */
export type RefusalMark = z.output<typeof refusalMarkSchema>;
/** An error answer as the relay writes it: one of its codes. */
export type ErrorAnswer = Omit<z.output<typeof errorAnswerSchema>, 'code'> & { code: RelayErrorCode };
