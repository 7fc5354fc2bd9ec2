// The database claim: whether this shop may use the database (the shop identity check), and what follows from it.
// Asked at start, again under the sync lock by every sync, after a clear() here or in another tab, and when the
// relay at baseUrl names its shop; what it finds, and storage events, go into status().
import { ShopLookupError, toLookupError } from '../../src/protocol';
import type { LookupError } from '../../src/protocol';
import { checkShopIdentity, identityOf } from '../store/shopIdentity';
import { storageError } from '../store/storageErrors';
import { metaKey, type Confirmation, type ShopIdentity } from '../store/store';
import { addTrackedProducts } from '../store/trackedProducts';
import type { LockManagerLike } from '../tabs/locks';
import type { EngineCore } from './engineCore';

export interface DatabaseClaimDeps extends EngineCore {
  dbName: string;
  locks: LockManagerLike;
  /** Told every claim after the first: watches restart against it, background sync resumes if it may. */
  onReclaim(claimed: Promise<LookupError | null>): void;
}

export interface DatabaseClaim {
  /** The latest claim's answer: null when this shop may use the database, else why not. */
  readonly ready: Promise<LookupError | null>;
  /** The shop this engine serves, once known. */
  shop(): ShopIdentity | undefined;
  /** Waits for the claim; throws when this database must not be used (another shop's, no storage). */
  usable(): Promise<void>;
  /** Drops what this engine knew of the data (the database was emptied, here or in another tab). */
  forget(): void;
  /** Checks again whose the database is; every watch restarts against the answer. */
  reclaim(claimed?: Promise<LookupError | null>): void;
  /**
   * Runs `work` holding the sync lock, once the claim under it still holds (another tab may have cleared meanwhile).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Empties the tables under the sync lock and claims the database again (clear()). The offline journal, this
   * till's uses of issued coupons (TillUse) and those not sent to the relay yet are kept unless `discardJournal`; a
   * database of another shop whose journal holds entries is not emptied then.
   */
  emptyAndReclaim(discardJournal: boolean): Promise<void>;
  /** Adds products this engine tracks (shop-wide); resolves with those new to the database. */
  track(productNos: number[]): Promise<number[]>;
  /**
   * The shop the relay at baseUrl names (discovery, every feed answer): checked against the database's claim before
   * anything of the relay is written. Throws `shop_mismatch` for another shop's relay, and then the whole engine
   * refuses the database, as it does for a direct engine of another shop.
   */
  relayShop(name: string | null): Promise<void>;
}

/** clear() of another shop's database while its offline journal holds entries: they are that shop's sales. */
function journalNotEmpty(dbName: string, entries: number): ShopLookupError {
  return new ShopLookupError(
    'journal_not_empty',
    `The local database "${dbName}" holds another shop's data with ${entries} offline-journal entr${entries === 1 ? 'y' : 'ies'} not reconciled yet, so nothing was cleared. ` +
      "Export them first with that shop's settings (offlineJournal(), then clearOfflineJournal(lastId)), or call clear({ discardJournal: true }) to drop them.",
  );
}

/** @example const claim = createDatabaseClaim({ ...core, dbName, locks, onReclaim }); await claim.usable(); */
export function createDatabaseClaim(deps: DatabaseClaimDeps): DatabaseClaim {
  const { db, status } = deps;
  const syncLock = `shop-lookup:${deps.dbName}:sync`;
  // the products this engine was asked to track: added to the shop-wide set (trackedProducts.ts) once the database
  // is claimed, and again after clear()
  const ownProducts = new Set(deps.options.products ?? []);
  const identity = identityOf(deps.options.baseUrl, deps.options.auth, deps.options.shopId);
  /** The shop the relay names, once it did: part of this engine's identity from then on. */
  let relayShop: string | null = null;
  let shop: ShopIdentity | undefined;
  identity.then(
    (i) => (shop = relayShop === null ? i : { ...i, relayShop }),
    () => undefined,
  );

  const claim = () =>
    identity
      .then((id) => checkShopIdentity(db, relayShop === null ? id : { ...id, relayShop }))
      .then(async (blocked) => {
        if (!blocked) await addTrackedProducts(db, [...ownProducts]);
        return blocked;
      })
      .catch(
        (e: unknown): LookupError =>
          (e as { code?: unknown }).code === 'bad_options'
            ? toLookupError(e)
            : (storageError(e) ?? {
                code: 'storage_error',
                message: `The local database could not be opened (${toLookupError(e).message}).`,
              }),
      );

  /** Tells what the claim found: the refusal, or what earlier syncs (this tab's or another's) achieved. */
  const tell = (claimed: Promise<LookupError | null>) =>
    void claimed.then(async (blocked) => {
      if (blocked) return status.facts.set({ lastError: blocked, failed: true });
      const [coupons, opts] = (await db.meta.bulkGet([metaKey.coupons, 'options']).catch(() => [])) as (
        | Confirmation
        | undefined
      )[];
      const f = status.facts.get();
      status.facts.set({
        lastSyncedAt: {
          coupons: f.lastSyncedAt.coupons ?? coupons?.confirmedAt ?? null,
          options: f.lastSyncedAt.options ?? opts?.confirmedAt ?? null,
        },
      });
    });

  let ready = claim();
  tell(ready);

  // Storage events: Dexie reopens the connection on next use; say what happened. Dexie also signals 'close' for
  // the closes it makes itself (ours, and the one a versionchange asks for): those are not news.
  let expectedClose = false;
  db.on('versionchange', (event: IDBVersionChangeEvent) => {
    expectedClose = true;
    setTimeout(() => (expectedClose = false), 0);
    // no new version: the database is being deleted (evicted by the browser, or the site's data cleared)
    status.facts.set({
      lastError: storageError({ name: event?.newVersion === null ? 'DatabaseDeletedError' : 'VersionError' }),
    });
  });
  db.on('close', () => {
    if (expectedClose || deps.isClosed()) return;
    status.facts.set({ lastError: storageError({ name: 'DatabaseClosedError' }) });
  });

  const forget = () => {
    deps.resources.clear();
    status.facts.set({ lastSyncedAt: { coupons: null, options: null }, lastError: null, failed: false });
  };

  function reclaim(claimed: Promise<LookupError | null> = claim()): void {
    if (deps.isClosed()) return;
    ready = claimed;
    tell(claimed);
    deps.onReclaim(claimed);
  }

  async function usable(): Promise<void> {
    const blocked = await ready;
    if (blocked) throw new ShopLookupError(blocked.code, blocked.message);
  }

  const underLock = <T>(work: () => Promise<T>) => deps.locks.request(syncLock, { signal: deps.signal }, work);

  return {
    get ready() {
      return ready;
    },
    shop: () => shop,
    usable,
    forget,
    reclaim,
    // Every sync checks under the lock whose the database is: another tab may have cleared it meanwhile, and
    // another shop claimed it. Then nothing of this shop is written there.
    exclusive: (work) =>
      underLock(async () => {
        const blocked = await claim();
        if (blocked) {
          reclaim();
          throw new ShopLookupError(blocked.code, blocked.message);
        }
        return work();
      }),
    async emptyAndReclaim(discardJournal) {
      // Under the sync lock: no sync of any tab is between two pages while the tables are emptied and claimed
      // again (a sync in another tab ends first; the ones after it check the claim).
      const blocked = await underLock(async () => {
        const otherShop = (await ready)?.code === 'shop_mismatch';
        await db.transaction('rw', db.tables, async () => {
          // verdicts not reconciled yet are the shop's sales, and this till's uses of issued coupons the API has not
          // confirmed hold its next sales back: never dropped unless the caller says so (another shop's uses go
          // with its data)
          const unreconciled = discardJournal ? 0 : await db.journal.count();
          if (unreconciled > 0 && otherShop) throw journalNotEmpty(db.name, unreconciled);
          // (the uses not sent to the relay yet too: the other tills still need to hear of them)
          const kept = new Set(discardJournal || otherShop ? [] : [db.journal.name, db.tillUses.name, db.outbox.name]);
          await Promise.all(db.tables.filter((t) => !kept.has(t.name)).map((t) => t.clear()));
        });
        forget();
        return claim(); // the emptied database may now be claimed by this shop
      });
      reclaim(Promise.resolve(blocked));
    },
    async track(productNos) {
      await usable();
      for (const p of productNos) if (Number.isSafeInteger(p)) ownProducts.add(p);
      // shop-wide: the leader's syncs list them from now on, whichever tab asked
      return addTrackedProducts(db, productNos);
    },
    async relayShop(name) {
      if (!name) {
        throw new ShopLookupError(
          'shop_mismatch',
          `The relay at ${deps.options.baseUrl} does not name its shop, so this till cannot check that it serves the shop of the local database "${db.name}"; nothing of it is stored. Update the relay (shop-lookup/relay names its shop in every answer).`,
        );
      }
      if (name === relayShop) return usable(); // checked already: the claim's answer stands
      relayShop = name;
      if (shop) shop = { ...shop, relayShop: name };
      const wasBlocked = await ready;
      const blocked = await claim();
      // every entry follows the new answer: refused (lookups, status, the scheduler), or no longer refused
      if (blocked || wasBlocked) reclaim(Promise.resolve(blocked));
      if (blocked) throw new ShopLookupError(blocked.code, blocked.message);
    },
  };
}
