// Retry as a closure (after TanStack query-core's retryer): exponential backoff with a cap and jitter, only for
// failures that can heal, honouring Retry-After; never retrying an abort or a refusal.
import { isTransient, type ApiError } from './apiError';
import { RETRY_AFTER_MAX_MS } from './retryAfter';

export interface RetryPolicy {
  /** Further attempts after the first. */
  retries: number;
  /**
   * Further attempts after a failure with no answer at all (refused, dropped, timed out): fewer, because when the
   * API is simply gone, the engine's reconnect probe takes over instead of one sync waiting minutes.
   */
  unansweredRetries?: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface RetryDeps {
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Told before each pause: how long and why (the engine shows phase 'waiting'). */
  onWait?: (ms: number, error: ApiError) => void;
  /** Told when a pause ends. */
  onResume?: () => void;
  /** Whether this error may be retried; default: transient codes, but not dropped connections (offline). */
  shouldRetry?: (error: ApiError) => boolean;
  signal?: AbortSignal;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The pause before attempt `attempt` (1-based): Retry-After when the API gave one, else capped backoff with jitter. */
function retryDelay(policy: RetryPolicy, attempt: number, error: ApiError, random = Math.random): number {
  // the API said how long: do as told (within reason), even beyond our own cap
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, RETRY_AFTER_MAX_MS);
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exp / 2 + (exp / 2) * random()); // "equal jitter": never less than half the backoff
}

/**
 * Runs `fn` until it succeeds, fails with a non-transient error, or the retries are spent.
 * @example const page = await retry(() => client.listCoupons(1), SYNC_RETRY, { onWait });
 */
export async function retry<T>(
  fn: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  deps: RetryDeps = {},
): Promise<T> {
  const wait = deps.sleep ?? sleep;
  const shouldRetry = deps.shouldRetry ?? isTransient;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      const e = error as ApiError;
      const unanswered = e?.code === 'network_error' || e?.code === 'timeout';
      const allowed = unanswered
        ? Math.min(policy.retries, policy.unansweredRetries ?? policy.retries)
        : policy.retries;
      if (deps.signal?.aborted || attempt >= allowed || !shouldRetry(e)) throw e;
      const ms = retryDelay(policy, attempt + 1, e, deps.random);
      deps.onWait?.(ms, e);
      try {
        await wait(ms, deps.signal);
      } finally {
        deps.onResume?.();
      }
    }
  }
}
