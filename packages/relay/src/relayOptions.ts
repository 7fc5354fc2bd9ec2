// The options of createShopRelay, checked with zod when the relay is created (see door/serverOptions.ts): an
// ioredis instance, a store that is not a RelayStore or a negative interval throws there, naming the option, instead of
// crashing the process later. Every option of ShopRelayOptions has its entry here (the compiler checks).
import * as z from 'zod';
import { isOrigin } from './door/cors';
import { checkOptions, SERVER_EXPECTED, serverOptionShape } from './door/serverOptions';
import { ALL_ROUTES } from './routeAccess';
import type { RelayStore } from './store/relayStore';
import type { ShopRelayOptions } from './types';

const wholeNumber = (min: number) => z.number().int().min(min);

/** A node-redis client (createClient()) or cluster (createCluster()); an ioredis instance is neither. */
function isRedisClient(value: unknown): boolean {
  const v = value as Record<string, unknown> | null;
  if (typeof v !== 'object' || v === null) return false;
  const looksLikeClient = ['duplicate', 'connect', 'multi', 'sMembers', 'hGetAll'].every(
    (m) => typeof v[m] === 'function',
  );
  const isCluster = 'masters' in v && typeof v.getNodeClientForKey === 'function';
  return looksLikeClient && (isCluster || !('_slots' in v));
}

function isRedisUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'redis:' || protocol === 'rediss:';
  } catch {
    return false;
  }
}

/** The methods a RelayStore has (relayStore.ts; the compiler checks that none is missing here; readChunk, refusals,
 * the kept bodies and the cursor key are optional). */
const STORE_METHODS = [
  'head',
  'readSnapshot',
  'readChanges',
  'readHashes',
  'readRecord',
  'commitListing',
  'commitUses',
  'dropUses',
  'hearTill',
  'uncheckedUses',
  'checkedUses',
  'listUses',
  'readCheckpoint',
  'stagePage',
  'readStaged',
  'discardListing',
  'trackedProducts',
  'trackProducts',
  'dropProductsAskedBefore',
  'acquireLease',
  'renewLease',
  'releaseLease',
  'readToken',
  'writeToken',
  'dropToken',
  'rateLimiter',
  'onHeadChange',
  'health',
  'onHealthChange',
  'close',
] as const satisfies readonly Exclude<keyof RelayStore, 'kind'>[];
type MissingStoreMethod = Exclude<
  Exclude<keyof RelayStore, 'kind' | 'readChunk' | 'refusals' | 'readKeptBody' | 'keepBody' | 'cursorKey'>,
  (typeof STORE_METHODS)[number]
>;
const allStoreMethods: [MissingStoreMethod] extends [never] ? true : MissingStoreMethod = true;
void allStoreMethods;

const isStore = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  STORE_METHODS.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');

const relayShape = {
  ...serverOptionShape,
  redis: z.optional(z.union([z.string().refine(isRedisUrl), z.custom<object>(isRedisClient)])),
  store: z.optional(z.custom<NonNullable<ShopRelayOptions['store']>>(isStore)),
  refreshIntervalMs: z.optional(wholeNumber(1)),
  shopId: z.optional(z.string().regex(/^[^\s*?[\]{}]+$/)),
  products: z.optional(z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER))),
  itemCacheMs: z.optional(wholeNumber(0)),
  maxWaitSeconds: z.optional(wholeNumber(0)),
  leaseMs: z.optional(wholeNumber(100)),
  retry: z.optional(
    z.strictObject({ retries: wholeNumber(0), baseDelayMs: wholeNumber(0), maxDelayMs: wholeNumber(0) }),
  ),
  pageSize: z.optional(wholeNumber(1).max(100)),
  now: z.optional(z.custom<() => number>((value) => typeof value === 'function')),
  listingShare: z.optional(z.number().min(0).max(1)),
  maxTrackedProducts: z.optional(wholeNumber(0)),
  productTtlMs: z.optional(wholeNumber(1)),
  maxLongPolls: z.optional(wholeNumber(1)),
  maxUses: z.optional(wholeNumber(0)),
  maxUsesPerTill: z.optional(wholeNumber(0)),
  usesRetentionMs: z.optional(wholeNumber(1)),
  cors: z.optional(
    z.strictObject({
      origins: z.array(z.string().refine(isOrigin)),
      anyOriginRoutes: z.optional(z.array(z.enum(ALL_ROUTES))),
      onUnlistedOrigin: z.optional(z.custom<(origin: string) => void>((value) => typeof value === 'function')),
    }),
  ),
  observer: z.optional(
    z.custom<NonNullable<ShopRelayOptions['observer']>>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        Object.entries(value).every(
          ([k, v]) =>
            ['listing', 'lease', 'storeHealth', 'log', 'uses'].includes(k) &&
            (v === undefined || typeof v === 'function'),
        ),
    ),
  ),
} satisfies Record<keyof ShopRelayOptions, z.ZodType>;
const relaySchema = z.strictObject(relayShape);

const RELAY_EXPECTED: Record<string, string> = {
  ...SERVER_EXPECTED,
  redis:
    "a redis:// or rediss:// URL, or a node-redis client or cluster (createClient() or createCluster() from 'redis'); " +
    'other clients (ioredis) are not supported',
  store: 'a store made by createMemoryStore()',
  refreshIntervalMs: 'a whole number of milliseconds, at least 1',
  shopId: 'a non-empty string without spaces, braces or glob characters (* ? [ ] { })',
  products: 'an array of product numbers (whole numbers >= 1)',
  itemCacheMs: 'a whole number of milliseconds, at least 0',
  maxWaitSeconds: 'a whole number of seconds, at least 0',
  leaseMs: 'a whole number of milliseconds, at least 100',
  retry: '{ retries, baseDelayMs, maxDelayMs }, whole numbers >= 0',
  pageSize: 'a whole number from 1 to 100',
  now: 'a function returning the time in ms',
  listingShare: 'a number from 0 to 1 (the share of upstream calls kept for the listing)',
  maxTrackedProducts: 'a whole number, at least 0',
  productTtlMs: 'a whole number of milliseconds, at least 1',
  maxLongPolls: 'a whole number, at least 1',
  maxUses: 'a whole number, at least 0',
  maxUsesPerTill: 'a whole number, at least 0',
  usesRetentionMs: 'a whole number of milliseconds, at least 1',
  cors: '{ origins, anyOriginRoutes?, onUnlistedOrigin? }',
  'cors.origins':
    "an array of origins such as 'https://till.example' (scheme, host and port; no path, no trailing slash, no '*')",
  'cors.anyOriginRoutes': `an array of route names (${ALL_ROUTES.join(', ')})`,
  'cors.onUnlistedOrigin': 'a function, told the origin of each request from a page not in origins',
  observer: 'an object of hook functions: listing, lease, storeHealth, log',
};

/**
 * The relay's options, checked; throws `bad_options` naming each wrong option and what it must be.
 * @example createShopRelay(checkRelayOptions(options))
 */
export function checkRelayOptions(options: ShopRelayOptions, component = 'createShopRelay'): ShopRelayOptions {
  return checkOptions(relaySchema, options, component, RELAY_EXPECTED);
}
