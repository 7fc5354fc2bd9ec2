// Refused requests counted per client for every instance on one Redis (the door's refusal bound, shared): a
// rate-limiter-flexible RateLimiterRedis of `perMinute` points a minute per client, consumed once per refusal. Each
// instance counts in memory too, and asks Redis only while its own count is within the bound, so a client flooding
// one instance (however many requests at once) costs Redis at most `perMinute` counts a minute there; a client seen
// past the bound is refused until its minute ends without any Redis command. An admitted request reads its client's
// count once (one GET), so a right guess after the bound is refused like a wrong one, whichever instance counted the
// others. While Redis is away, the count in memory decides.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RefusalCount } from '../relayStore';
import type { RedisClient } from './redisConnection';

export interface RedisRefusalsOptions {
  client: RedisClient;
  /** rate-limiter-flexible's key prefix: a client's count is `${keyPrefix}:${clientId}`. */
  keyPrefix: string;
  /** Refusals a client may draw per minute (a fixed minute from its first). */
  perMinute: number;
  now?: () => number;
}

/** Clients remembered past their bound at most (each only until its minute ends). */
const MAX_BLOCKED = 10_000;
const MINUTE_S = 60;

/** @example const refusals = createRedisRefusals({ client, keyPrefix: 'shop-lookup:hub:refused', perMinute: 10 }); */
export function createRedisRefusals(options: RedisRefusalsOptions): RefusalCount {
  const { client } = options;
  const now = options.now ?? (() => Date.now());
  const points = Math.max(1, options.perMinute);
  const local = new RateLimiterMemory({ points, duration: MINUTE_S });
  const limiter = new RateLimiterRedis({
    storeClient: client,
    useRedisPackage: true,
    rejectIfRedisNotReady: true,
    keyPrefix: options.keyPrefix,
    points,
    duration: MINUTE_S,
  });
  const blockedUntil = new Map<string, number>();

  const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

  function block(clientId: string, ms: number): void {
    if (blockedUntil.size >= MAX_BLOCKED) {
      const t = now();
      for (const [id, until] of blockedUntil) if (until <= t) blockedUntil.delete(id);
      if (blockedUntil.size >= MAX_BLOCKED) blockedUntil.delete(blockedUntil.keys().next().value!);
    }
    blockedUntil.set(clientId, now() + Math.max(1, ms));
  }

  function blocked(clientId: string): number {
    const until = blockedUntil.get(clientId);
    if (until === undefined) return 0;
    const left = until - now();
    if (left > 0) return seconds(left);
    blockedUntil.delete(clientId);
    return 0;
  }

  /** The client's count and the ms left of its minute, from Redis (or this instance's while Redis is away). */
  async function count(clientId: string): Promise<{ consumed: number; msLeft: number } | null> {
    try {
      const key = limiter.getKey(clientId);
      const consumed = Number(await client.get(key));
      if (!(consumed >= points)) return null; // not past the bound: the one GET is all it costs
      return { consumed, msLeft: Number(await client.pTTL(key)) };
    } catch {
      const res = await local.get(clientId);
      return res ? { consumed: res.consumedPoints, msLeft: res.msBeforeNext } : null;
    }
  }

  return {
    blocked,
    async refused(clientId) {
      const past = (res: RateLimiterRes): number => {
        block(clientId, res.msBeforeNext);
        return seconds(res.msBeforeNext);
      };
      try {
        await local.consume(clientId, 1);
      } catch (error) {
        // past the bound in this instance alone: the shared count is past it too, Redis is not asked
        return past(error as RateLimiterRes);
      }
      try {
        const res = await limiter.consume(clientId, 1);
        // that was the last one its minute allows: this instance refuses the next at once, without asking Redis
        if (res.remainingPoints <= 0) block(clientId, res.msBeforeNext);
        return 0;
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) return 0; // Redis away: counted in this instance only
        return past(error);
      }
    },
    async admitted(clientId) {
      const local = blocked(clientId);
      if (local > 0) return local;
      const past = await count(clientId);
      if (!past || past.consumed < points) return 0;
      block(clientId, past.msLeft);
      return seconds(past.msLeft);
    },
  };
}
