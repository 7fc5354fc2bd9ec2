// The relay package's defaults, in one place: what createShopRelay, createRelayHub and createShopApiProxy use for an
// option not given, the per-client bounds of the door, the stores' bounds, and the shop-lookup-relay command's
// settings when their variable is unset (relayServerConfig.ts makes the env table of docs/relay.md from these).
// It imports nothing of the relay, so every folder of it may import it; the shop API client's own defaults (origin,
// rate limits, timeout, page size, answer bounds, retries) are @shop-lookup/shop-api's defaults.ts.

const DAY_MS = 24 * 60 * 60 * 1000;

/** createShopRelay's options when not given (each shop of a hub and the command's relay too). */
export const RELAY_DEFAULTS = {
  /** How often the API is listed again, ms. */
  refreshIntervalMs: 300_000,
  /** The sync lease's time to live, ms. */
  leaseMs: 30_000,
  /** The longest long-poll `wait` accepted, s. */
  maxWaitSeconds: 60,
  /** Long-polls parked at once on one instance. */
  maxLongPolls: 5_000,
  /** How long a single item's answer is reused for identical requests, ms. */
  itemCacheMs: 2_000,
  /** The longest request URL, with basePath and query (the proxy's too). */
  maxUrlLength: 2048,
  /** The share of the upstream calls kept for the listing while clients' reads wait. */
  listingShare: 0.75,
  /** Products a shop's relay lists at most. */
  maxTrackedProducts: 100,
  /** A product no till asked for in this long is no longer listed, ms. */
  productTtlMs: 30 * DAY_MS,
  /** Issued-coupon uses a shop's relay keeps. */
  maxUses: 100_000,
  /** How long a code's uses are kept after the newest of them arrived, ms. */
  usesRetentionMs: 30 * DAY_MS,
} as const;

/** The per-client bounds (`clientLimits`) of the relay, the hub and the proxy. */
export const CLIENT_LIMITS = {
  /** Requests of one client at once (long-polls included). */
  concurrent: 8,
  /** Requests of one client waiting for their turn at the door. */
  queued: 32,
  /** Requests per second of one client, and its burst. */
  perSecond: 20,
  burst: 60,
  /** The longest a request waits in its client's queue, ms. */
  maxWaitMs: 10_000,
  /** Requests of one client waiting for the shop API. */
  upstreamQueued: 4,
  /** The longest an anonymous client's read waits for the shop API, ms. */
  anonymousWaitMs: 10_000,
  /** Refused requests (401/403) of one network a minute. */
  refusedPerMinute: 10,
} as const;

/** createRelayHub's own options when not given. */
export const HUB_DEFAULTS = {
  /** Shops kept open at once. */
  maxHotShops: 100,
  /** Records held in memory over every shop. */
  maxHotRecords: 500_000,
  /** Upstream listings one instance runs at once, over all its shops. */
  maxConcurrentListings: 4,
  /** How long a shop's credentials are used before they are asked again, ms. */
  credentialsTtlMs: 60_000,
  /** The walk over the shops starts this often at most, ms (or every refreshIntervalMs when shorter). */
  sweepIntervalMs: 60_000,
} as const;

/** The stores' bounds (memory and Redis alike). */
export const STORE_DEFAULTS = {
  /** Change-log entries kept; a till further behind starts again from a snapshot. */
  maxChanges: 100_000,
  /**
   * Bytes of compressed snapshot chunks kept per shop at most: a few full snapshots of a large shop (10,000 coupons
   * are about 110 kB brotli-coded), each version's chunks replacing the last's; past it the chunks kept first go.
   */
  maxKeptBytes: 16 * 1024 * 1024,
} as const;

/** The shop-lookup-relay command's own settings when their variable is unset. */
export const COMMAND_DEFAULTS = {
  host: '0.0.0.0',
  port: 8788,
  logLevel: 'info',
  /** Log lines one client may cause a minute. */
  logClientLinesPerMinute: 600,
  maxConnections: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  shutdownTimeoutMs: 10_000,
  /** USES_RETENTION_DAYS: RELAY_DEFAULTS.usesRetentionMs in days. */
  usesRetentionDays: RELAY_DEFAULTS.usesRetentionMs / DAY_MS,
} as const;
