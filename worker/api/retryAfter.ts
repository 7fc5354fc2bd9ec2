// The one Retry-After reader: the engine's transport, the relay feed client and the proxy all pause by it.

/**
 * Retry-After (seconds or an HTTP date) in ms, or undefined when missing or unreadable.
 * @example retryAfterMs('2') // 2000
 */
export function retryAfterMs(header: string | null | undefined): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
