// The rate limiter's contract, types only: what the engine's limiter (rateLimiter.ts) and the relay's shared one
// (relay/store/redis/redisRateLimiter.ts) both are. Apart from the limiter so that the relay's published types
// (RelayStore) need nothing of the browser's: this file imports nothing.

export type RequestClass = 'list' | 'other';
export type Priority = 'user' | 'background';

export interface RateLimiter {
  /** Resolves when a request of this class may start. */
  acquire(cls: RequestClass, priority: Priority, signal?: AbortSignal): Promise<void>;
  /** Nobody of this class starts before `ms` from now (after a 429 with Retry-After). */
  pause(cls: RequestClass, ms: number): void;
  /** Rejects everything queued (engine closing). */
  dispose(): void;
}
