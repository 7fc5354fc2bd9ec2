// The engine's defaults, in one place: what createShopLookup's options are when not given (docs/options.md shows
// them). It imports nothing, so every folder of the engine may import it. The shop API client's defaults (rate
// limits, request timeout, page size, retries) are @shop-lookup/shop-api's defaults.ts.

/** Every engine option's default that is a number or a name of the engine's own. */
export const ENGINE_DEFAULTS = {
  /** Background refresh period while online, ms (5 minutes). */
  refreshIntervalMs: 5 * 60 * 1000,
  /** How long an online verdict waits for the relay's claim, ms. */
  claimTimeoutMs: 1_500,
  /** Local data older than this gives `stale` verdicts, ms (24 h). */
  maxDataAgeMs: 24 * 60 * 60 * 1000,
  /** The shop time zone naive coupon dates are read in. */
  timeZone: 'Asia/Seoul',
  /** Entries of one page of the offline journal's export when `limit` is not given. */
  journalPageSize: 1_000,
} as const;
