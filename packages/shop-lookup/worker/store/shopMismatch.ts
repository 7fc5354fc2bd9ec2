// The words of shop_mismatch: why a database or a relay is refused (shopIdentity.ts decides; this file says it).
import type { LookupError } from '../../src/protocol';
import type { ShopIdentity } from './store';

/**
 * Why: the database holds another shop's data (`other`), was filled from another shop's relay (`otherRelay`), was
 * cleared meanwhile (`cleared`), or the relay names another shop than the till's shopId (`relayRefused`).
 */
export type ShopMismatch = 'other' | 'otherRelay' | 'cleared' | 'relayRefused';

/**
 * @example shopMismatch('other', 'shop-lookup', mine, stored) // { code: 'shop_mismatch', message: 'The local
 * database … ' }
 */
export function shopMismatch(
  reason: ShopMismatch,
  dbName: string,
  mine: ShopIdentity,
  stored?: ShopIdentity,
): LookupError {
  const message = {
    relayRefused: () =>
      `The relay at ${mine.baseUrl} serves shop ${JSON.stringify(mine.relayShop)}, but this till is for shop ${JSON.stringify(mine.shopId)} (its shopId), so nothing of it is stored. Point baseUrl at that shop's relay, or give the relay the same shopId (createShopRelay({ shopId: ${JSON.stringify(mine.shopId)} })).`,
    cleared: () =>
      `The local database "${dbName}" was cleared meanwhile and is not claimed by this shop; nothing was stored.`,
    otherRelay: () =>
      `The relay at ${mine.baseUrl} serves shop ${JSON.stringify(mine.relayShop)}, but the local database "${dbName}" holds the data of shop ${JSON.stringify(stored?.relayShop)} (from the relay there before), so nothing of it is stored. Point baseUrl back at that shop's relay, or call clear() to drop the data and take this relay's.`,
    other: () => {
      const whose = stored?.shopId ? `shop ${JSON.stringify(stored.shopId)} at ${stored.baseUrl}` : stored?.baseUrl;
      return `The local database "${dbName}" holds the data of another shop (${whose}), so it is not served here. Use one dbName per shop (and a shopId). To drop the other shop's data, first export its offline journal (open the database with that shop's settings: offlineJournal(), then clearOfflineJournal(lastId)), then call clear().`;
    },
  }[reason]();
  return { code: 'shop_mismatch', message };
}
