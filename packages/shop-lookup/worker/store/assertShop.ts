// assertShop: a write outside a sync checks that the database is still this shop's (shopIdentity.ts's verdicts). Its
// callers are the network side's (readThrough.ts, syncProductOptions.ts), so it stays out of the worker's first load.
import { ShopLookupError } from '../../src/protocol';
import type { ShopMismatch } from './shopMismatch';
import { compare, refusal, relayRefused } from './shopIdentity';
import { metaKey, type ShopDatabase, type ShopIdentity } from './store';

/**
 * Call first inside every transaction that writes what the API answered outside a sync (which checks under the
 * sync lock): throws `shop_mismatch` unless the database is still this shop's. Another tab may have cleared it and
 * another shop claimed it while the request was on its way.
 * @example await db.transaction('rw', [db.coupons, db.meta], async () => { await assertShop(db, ctx.shop); ... });
 */
export async function assertShop(db: ShopDatabase, mine: ShopIdentity | undefined): Promise<void> {
  if (!mine) return;
  const stored = (await db.meta.get(metaKey.shop)) as ShopIdentity | undefined;
  const verdict = stored ? compare(stored, mine) : 'other';
  const reason: ShopMismatch | null = relayRefused(mine)
    ? 'relayRefused'
    : !stored
      ? 'cleared'
      : verdict === 'other' || verdict === 'otherRelay'
        ? verdict
        : null;
  if (reason === null) return;
  const error = await refusal(reason, db, mine, stored);
  throw new ShopLookupError(error.code, error.message);
}
