// The one Retry-After reader: the engine's transport, the relay feed client and the proxy all pause by it.

/**
 * The longest pause a Retry-After may ask for: a longer one (a year, a misconfigured gateway) is taken as this, so
 * no answer can stop syncs for longer; if the API still refuses then, it says so again.
 * @example Math.min(ms, RETRY_AFTER_MAX_MS)
 */
export const RETRY_AFTER_MAX_MS = 10 * 60 * 1000;

/**
 * Retry-After (seconds or an HTTP date) in ms, at most RETRY_AFTER_MAX_MS; undefined when missing or unreadable.
 * @example retryAfterMs('2') // 2000
 */
export function retryAfterMs(header: string | null | undefined): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isNaN(ms) ? undefined : Math.min(RETRY_AFTER_MAX_MS, Math.max(0, ms));
}
