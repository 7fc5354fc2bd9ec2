// Every Redis key and channel of one shop's relay state, under one prefix (`shop-lookup:{<shopId>}:`), so one Redis
// serves many shops and `SCAN MATCH shop-lookup:{<shopId>}:*` finds everything of one shop. The braces are a Redis
// Cluster hash tag: every key of a shop hashes to one slot, so its MULTI/EXEC and scripts run on a cluster unchanged.
import type { ResourceId } from '../relayStore';

/** The default prefix of a shop's keys. @example redisPrefix('shop-1') // 'shop-lookup:{shop-1}:' */
export function redisPrefix(shopId: string): string {
  if (shopId === '' || /[\s*?[\]{}]/.test(shopId)) {
    throw new TypeError(
      `shopId ${JSON.stringify(shopId)} must be non-empty, without spaces, braces or glob characters`,
    );
  }
  return `shop-lookup:{${shopId}}:`;
}

/**
 * The hash tag a prefix gives its keys (what Redis Cluster hashes: the text between the first `{` and the next `}`),
 * or null when it gives none (then a shop's keys spread over slots and a cluster refuses its transactions).
 * @example hashTag('shop-lookup:{shop-1}:') // 'shop-1'
 */
export function hashTag(prefix: string): string | null {
  const open = prefix.indexOf('{');
  if (open < 0) return null;
  const close = prefix.indexOf('}', open + 1);
  return close > open + 1 ? prefix.slice(open + 1, close) : null;
}

/** The key names under `prefix`. @example redisKeys('shop-lookup:s1:').records('coupons') */
export function redisKeys(prefix: string) {
  return {
    prefix,
    /** string: the feed handle, made once (SET NX). */
    handle: `${prefix}feed:handle`,
    /** string: the head version (INCR'd through commits). */
    version: `${prefix}feed:version`,
    /** string: the oldest `since` the change log still answers. */
    oldest: `${prefix}feed:oldest`,
    /** hash resource → ms of the last complete listing. */
    confirmed: `${prefix}feed:confirmed`,
    /** set of resources that hold records. */
    resources: `${prefix}feed:resources`,
    /** sorted set: score = version, member = the change as JSON. */
    log: `${prefix}feed:log`,
    /** pub/sub channel: the new head as JSON after every commit. */
    channel: `${prefix}feed:head`,
    /** hash key → record JSON. */
    records: (resource: ResourceId) => `${prefix}snapshot:${resource}:records`,
    /** hash key → record hash. */
    hashes: (resource: ResourceId) => `${prefix}snapshot:${resource}:hashes`,
    /** sorted set of keys, all score 0: ZRANGE BYLEX pages the snapshot in a stable order. */
    keys: (resource: ResourceId) => `${prefix}snapshot:${resource}:keys`,
    /** counter: the uses the shop's `uses` records hold (maxUses). */
    usesCount: `${prefix}uses:count`,
    /** sorted set: score = when the code's newest use was received (ms), member = the issued code (retention). */
    usesReceived: `${prefix}uses:received`,
    /** hash till → its count of uses held and strikes as JSON (useRecords.ts TillCounts). */
    usesTills: `${prefix}uses:tills`,
    /** hash till → when the relay last heard from it as JSON (tillHeard.ts). */
    usesHeard: `${prefix}uses:heard`,
    /** sorted set: score = when first recorded (ms), member = an issued code not yet seen in an API answer. */
    usesUnchecked: `${prefix}uses:unchecked`,
    /** string: the running listing's checkpoint as JSON. */
    checkpoint: (resource: ResourceId) => `${prefix}listing:${resource}:checkpoint`,
    /** hash key → { record, hash } JSON of the running listing. */
    staged: (resource: ResourceId) => `${prefix}listing:${resource}:staged`,
    /** set of tracked product numbers. */
    products: `${prefix}products`,
    /** sorted set: score = when a client last asked for the product (ms), member = its number. */
    productsAsked: `${prefix}products:asked`,
    /** string: a compressed snapshot chunk, the digest of its body first (redisKeptBodies.ts), with PX. */
    kept: (slot: string) => `${prefix}kept:${slot}`,
    /** hash slot → `<ms kept>:<bytes>`: every kept chunk of the shop, for its byte budget (with PX). */
    keptList: `${prefix}kept-list`,
    /** string: the key snapshot cursors are signed with (hex), made once (SET NX). */
    cursorKey: `${prefix}feed:cursor-key`,
    /** string: the upstream access token. */
    token: `${prefix}token`,
    /** string: the lease holder (owner), with PX. */
    lease: (name: string) => `${prefix}lease:${name}`,
    /** counter: the fencing token, INCR'd by every new holder. */
    fence: (name: string) => `${prefix}lease:${name}:fence`,
    /** rate-limiter-flexible's key prefix for one request class. */
    rateLimit: (cls: string) => `${prefix}ratelimit:${cls}`,
    /** rate-limiter-flexible's key prefix for the refused requests counted per client. */
    refused: `${prefix}refused`,
    /** string with PX: nobody of this class starts before it expires (after a 429). */
    pause: (cls: string) => `${prefix}ratelimit:${cls}:pause`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
