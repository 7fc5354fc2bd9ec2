// clear()'s emptying of the database: under the sync lock, keeping the offline journal and this till's uses unless
// told, then claimed again. In the checkout's chunk (checkoutChunk.ts), out of the worker's first load.
import { ShopLookupError } from '../../src/protocol';
import type { ShopDatabase } from '../store/store';
import type { DatabaseClaim } from './databaseClaim';

/** clear() of another shop's database while its offline journal holds entries: they are that shop's sales. */
function journalNotEmpty(dbName: string, entries: number): ShopLookupError {
  return new ShopLookupError(
    'journal_not_empty',
    `The local database "${dbName}" holds another shop's data with ${entries} offline-journal entr${entries === 1 ? 'y' : 'ies'} not reconciled yet, so nothing was cleared. ` +
      "Export them first with that shop's settings (offlineJournal(), then clearOfflineJournal(lastId)), or call clear({ discardJournal: true }) to drop them.",
  );
}

/**
 * Empties the tables under the sync lock and claims the database again (clear()). The offline journal, this till's
 * uses of issued coupons (TillUse) and those not sent to the relay yet are kept unless `discardJournal`; a database of
 * another shop whose journal holds entries is not emptied then.
 * @example await emptyDatabase(claim, db, false);
 */
export async function emptyDatabase(claim: DatabaseClaim, db: ShopDatabase, discardJournal: boolean): Promise<void> {
  // Under the sync lock: no sync of any tab is between two pages while the tables are emptied and claimed again (a
  // sync in another tab ends first; the ones after it check the claim).
  const blocked = await claim.underLock(async () => {
    const otherShop = (await claim.ready)?.code === 'shop_mismatch';
    await db.transaction('rw', db.tables, async () => {
      // verdicts not reconciled yet are the shop's sales, and this till's uses of issued coupons the API has not
      // confirmed hold its next sales back: never dropped unless the caller says so (another shop's uses go with
      // its data)
      const unreconciled = discardJournal ? 0 : await db.journal.count();
      if (unreconciled > 0 && otherShop) throw journalNotEmpty(db.name, unreconciled);
      // (the uses not sent to the relay yet too: the other tills still need to hear of them)
      const kept = new Set(discardJournal || otherShop ? [] : [db.journal.name, db.tillUses.name, db.outbox.name]);
      await Promise.all(db.tables.filter((t) => !kept.has(t.name)).map((t) => t.clear()));
    });
    claim.forget();
    return claim.check(); // the emptied database may now be claimed by this shop
  });
  claim.reclaim(Promise.resolve(blocked));
}
