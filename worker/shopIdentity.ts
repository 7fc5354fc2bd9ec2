// One shop's data never leaks into another's database: the database remembers which shop filled it (the API
// address, and a SHA-256 hash of the API key, never the key itself) and refuses to serve another shop.
import type { LookupError, ShopAuth } from '../src/types';
import { metaKey, type ShopDatabase, type ShopIdentity } from './store';

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The identity of the shop these options point at. */
export async function identityOf(baseUrl: string, auth: ShopAuth | undefined): Promise<ShopIdentity> {
  const apiKey = auth && 'key' in auth ? await sha256(`shop-lookup:${auth.key}`) : null;
  return { key: metaKey.shop, baseUrl: baseUrl.replace(/\/+$/, ''), apiKey };
}

function sameShop(a: ShopIdentity, b: ShopIdentity): boolean {
  return a.apiKey !== null && b.apiKey !== null ? a.apiKey === b.apiKey : a.baseUrl === b.baseUrl;
}

/**
 * Claims an empty database for this shop, or checks that it already belongs to it.
 * @returns null when the database may be used; a `shop_mismatch` error when it holds another shop's data.
 */
export async function checkShopIdentity(db: ShopDatabase, mine: ShopIdentity): Promise<LookupError | null> {
  return db.transaction('rw', db.meta, async () => {
    const stored = (await db.meta.get(metaKey.shop)) as ShopIdentity | undefined;
    if (!stored) {
      await db.meta.put(mine);
      return null;
    }
    if (sameShop(stored, mine)) return null;
    return {
      code: 'shop_mismatch',
      message: `The local database "${db.name}" holds the data of another shop (${stored.baseUrl}), so it is not served here. Use one dbName per shop, or call clear() to drop the other shop's data.`,
    };
  });
}
