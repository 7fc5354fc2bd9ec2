// One shop's data never leaks into another's database: the database remembers which shop filled it (the host's
// shopId; the API address, and a SHA-256 hash of the API key, never the key itself; the shop a relay names) and
// refuses to serve another.
import { ShopLookupError } from '../../src/protocol';
import type { LookupError, ShopAuth } from '../../src/protocol';
import type { ShopMismatch } from './shopMismatch';
import { metaKey, type ShopDatabase, type ShopIdentity } from './store';

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The identity of the shop these options point at. */
export async function identityOf(baseUrl: string, auth: ShopAuth | undefined, shopId?: string): Promise<ShopIdentity> {
  // checked here, not in createShopLookup: the page's entry has a size budget, and every entry point waits for this
  if (shopId !== undefined && (typeof shopId !== 'string' || shopId.trim() === '')) {
    throw new ShopLookupError(
      'bad_options',
      `shopId must be a non-empty string naming the shop, got ${JSON.stringify(shopId)}.`,
    );
  }
  const apiKey = auth && 'key' in auth ? await sha256(`shop-lookup:${auth.key}`) : null;
  return { key: metaKey.shop, baseUrl: baseUrl.replace(/\/+$/, ''), apiKey, shopId: shopId ?? null };
}

export type Verdict = 'same' | 'adopt' | 'other' | 'otherRelay';

/**
 * 'same', 'other', or 'adopt' (the same shop by address and key, claimed before it had a shopId: record it).
 * A database claimed with a shopId is refused to any engine without that very shopId, whatever its auth.
 * Then the relay's shop, once the engine knows it: a database filled from one relay refuses a relay that names
 * another shop ('otherRelay'; the address alone cannot tell them apart: a DNS name re-pointed, a config copied),
 * and records the first relay's shop it sees ('adopt').
 */
export function compare(stored: ShopIdentity, mine: ShopIdentity): Verdict {
  const storedId = stored.shopId ?? null;
  const myId = mine.shopId ?? null;
  let verdict: Verdict;
  if (storedId !== null) verdict = storedId === myId ? 'same' : 'other';
  else {
    const same =
      stored.apiKey !== null && mine.apiKey !== null ? stored.apiKey === mine.apiKey : stored.baseUrl === mine.baseUrl;
    verdict = !same ? 'other' : myId === null ? 'same' : 'adopt';
  }
  const myRelay = mine.relayShop ?? null;
  const storedRelay = stored.relayShop ?? null;
  if (verdict === 'other' || myRelay === null || myRelay === storedRelay) return verdict;
  return storedRelay === null ? 'adopt' : 'otherRelay';
}

/** What an adopting engine records: its own identity, keeping the relay's shop the database already knows. */
const adopted = (stored: ShopIdentity, mine: ShopIdentity): ShopIdentity => ({
  ...mine,
  relayShop: mine.relayShop ?? stored.relayShop ?? null,
});

/**
 * Default database name: one per shop when the host names the shop.
 * @example defaultDbName('S2024abcd') // 'shop-lookup:S2024abcd'
 */
export function defaultDbName(shopId: string | undefined): string {
  return shopId === undefined ? 'shop-lookup' : `shop-lookup:${shopId}`;
}

/** A till that names its shop (shopId) takes no relay that names another, whatever its database holds. */
export const relayRefused = (mine: ShopIdentity): boolean =>
  (mine.shopId ?? null) !== null && (mine.relayShop ?? null) !== null && mine.relayShop !== mine.shopId;

// the refusals' words load only when a database is refused: they stay out of the worker's first load
export const refusal = (
  reason: ShopMismatch,
  db: ShopDatabase,
  mine: ShopIdentity,
  stored?: ShopIdentity,
): Promise<LookupError> => import('./shopMismatch').then((m) => m.shopMismatch(reason, db.name, mine, stored));

/**
 * Claims an empty database for this shop, or checks that it already belongs to it (and, once the engine knows the
 * shop its relay names, that the database was filled from that shop's relay; the first one is recorded).
 * @returns null when the database may be used; a `shop_mismatch` error when it holds another shop's data.
 */
export async function checkShopIdentity(db: ShopDatabase, mine: ShopIdentity): Promise<LookupError | null> {
  if (relayRefused(mine)) return refusal('relayRefused', db, mine);
  const found = await db.transaction('rw', db.meta, async () => {
    const stored = (await db.meta.get(metaKey.shop)) as ShopIdentity | undefined;
    if (!stored) {
      await db.meta.put(mine);
      return null;
    }
    const verdict = compare(stored, mine);
    if (verdict === 'adopt') await db.meta.put(adopted(stored, mine));
    return verdict === 'other' || verdict === 'otherRelay' ? { verdict, stored } : null;
  });
  return found && refusal(found.verdict, db, mine, found.stored);
}
