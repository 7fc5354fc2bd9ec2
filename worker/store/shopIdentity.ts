// One shop's data never leaks into another's database: the database remembers which shop filled it (the host's
// shopId; the API address, and a SHA-256 hash of the API key, never the key itself) and refuses to serve another.
import { ShopLookupError } from '../../src/protocol';
import type { LookupError, ShopAuth } from '../../src/protocol';
import { metaKey, type ShopDatabase, type ShopIdentity } from './store';

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The identity of the shop these options point at. */
export async function identityOf(baseUrl: string, auth: ShopAuth | undefined, shopId?: string): Promise<ShopIdentity> {
  // checked here, not in createShopLookup: the page's entry has a size budget, and every entry point waits for this
  if (shopId !== undefined && (typeof shopId !== 'string' || shopId.trim() === '')) {
    throw new ShopLookupError('bad_options', `shopId must be a non-empty string naming the shop, got ${JSON.stringify(shopId)}.`);
  }
  const apiKey = auth && 'key' in auth ? await sha256(`shop-lookup:${auth.key}`) : null;
  return { key: metaKey.shop, baseUrl: baseUrl.replace(/\/+$/, ''), apiKey, shopId: shopId ?? null };
}

/**
 * 'same', 'other', or 'adopt' (the same shop by address and key, claimed before it had a shopId: record it).
 * A database claimed with a shopId is refused to any engine without that very shopId, whatever its auth.
 */
function compare(stored: ShopIdentity, mine: ShopIdentity): 'same' | 'other' | 'adopt' {
  const storedId = stored.shopId ?? null;
  const myId = mine.shopId ?? null;
  if (storedId !== null) return storedId === myId ? 'same' : 'other';
  const same = stored.apiKey !== null && mine.apiKey !== null ? stored.apiKey === mine.apiKey : stored.baseUrl === mine.baseUrl;
  if (!same) return 'other';
  return myId === null ? 'same' : 'adopt';
}

/** Default database name: one per shop when the host names the shop. @example defaultDbName('S2024abcd') // 'shop-lookup:S2024abcd' */
export function defaultDbName(shopId: string | undefined): string {
  return shopId === undefined ? 'shop-lookup' : `shop-lookup:${shopId}`;
}

function mismatch(db: ShopDatabase, stored: ShopIdentity): LookupError {
  const whose = stored.shopId ? `shop ${JSON.stringify(stored.shopId)} at ${stored.baseUrl}` : stored.baseUrl;
  return {
    code: 'shop_mismatch',
    message: `The local database "${db.name}" holds the data of another shop (${whose}), so it is not served here. Use one dbName per shop (and a shopId). To drop the other shop's data, first export its offline journal (open the database with that shop's settings: offlineJournal(), then clearOfflineJournal(lastId)), then call clear().`,
  };
}

/**
 * Call first inside every transaction that writes what the API answered outside a sync (which checks under the
 * sync lock): throws `shop_mismatch` unless the database is still this shop's. Another tab may have cleared it and
 * another shop claimed it while the request was on its way.
 * @example await db.transaction('rw', [db.coupons, db.meta], async () => { await assertShop(db, ctx.shop); ... });
 */
export async function assertShop(db: ShopDatabase, mine: ShopIdentity | undefined): Promise<void> {
  if (!mine) return;
  const stored = (await db.meta.get(metaKey.shop)) as ShopIdentity | undefined;
  if (stored && compare(stored, mine) !== 'other') return;
  const error = stored
    ? mismatch(db, stored)
    : { code: 'shop_mismatch', message: `The local database "${db.name}" was cleared meanwhile and is not claimed by this shop; nothing was stored.` };
  throw new ShopLookupError(error.code, error.message);
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
    const verdict = compare(stored, mine);
    if (verdict === 'adopt') await db.meta.put(mine);
    return verdict === 'other' ? mismatch(db, stored) : null;
  });
}
