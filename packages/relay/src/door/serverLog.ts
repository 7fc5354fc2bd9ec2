// The one way the proxy and the relay write to their log: a line of our own words, and for an unexpected error its
// stack, both through the redaction, so no log line carries the key, the secret, a token or a password.
import type { Redaction } from './redaction';

/** Writes one line: `[prefix] message` (and the error's stack or text), redacted. */
export type ServerLog = (level: 'warn' | 'error', message: string, error?: unknown) => void;

/**
 * @example const log = createServerLog(redaction, 'shop-relay'); log('warn', 'listing coupons failed: rate_limited');
 */
export function createServerLog(redaction: Redaction, prefix: string): ServerLog {
  return (level, message, error) => {
    const detail =
      error === undefined ? '' : `\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    console[level](redaction.text(`[${prefix}] ${message}${detail}`));
  };
}
