// What a hub needs to know of a shop it does not hold in memory, read straight from Redis in one MULTI (one slot: the
// shop's hash tag): whether a listing is due (a resource never confirmed, or confirmed longer ago than the refresh
// interval) and until when another instance's sync lease runs.
import type { RedisClient } from './redisConnection';
import { redisKeys, redisPrefix } from './redisKeys';

export interface ShopProbe {
  /** A listing of this shop is due now. */
  due: boolean;
  /** When the live sync lease of the shop lapses unless renewed (ms), or null when nobody holds it. */
  leaseUntil: number | null;
}

/**
 * @example const { due, leaseUntil } = await probeShop(client, 'shop-7f3a', { refreshIntervalMs: 300_000, now:
 * Date.now() });
 */
export async function probeShop(
  client: RedisClient,
  shopId: string,
  { refreshIntervalMs, now }: { refreshIntervalMs: number; now: number },
): Promise<ShopProbe> {
  const keys = redisKeys(redisPrefix(shopId));
  const [confirmed, products, lease] = (await client
    .multi()
    .hGetAll(keys.confirmed)
    .sMembers(keys.products)
    .get(keys.lease('sync'))
    .exec()) as unknown as [Record<string, string>, string[], string | null];
  const expiresAt = lease === null ? null : Number((JSON.parse(lease) as { expiresAt?: unknown }).expiresAt);
  const leaseUntil = expiresAt !== null && Number.isFinite(expiresAt) && expiresAt > now ? expiresAt : null;
  // as upstreamSync decides: within 90% of the interval counts as fresh, so instances' timers do not double up
  const stale = (resource: string): boolean => {
    const at = confirmed[resource];
    return at === undefined || now - Number(at) >= refreshIntervalMs * 0.9;
  };
  const due = stale('coupons') || products.some((no) => stale(`options:${no}`));
  return { due, leaseUntil };
}
