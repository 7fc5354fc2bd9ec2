// The database claim: whether this shop may use the database (the shop identity check), and what follows from it.
// Asked at start, again under the sync lock by every sync, after a clear() here or in another tab, and when the
// relay at baseUrl names its shop; what it finds, and storage events, go into status(). What only a sync, a relay or
// clear() asks of it lives in their chunks (networkClaim.ts, emptyDatabase.ts), out of the worker's first load.
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
  /** Claims the database again (the shop identity check, with the relay's shop once named): its answer. */
  check(): Promise<LookupError | null>;
  /** Runs `work` holding the sync lock of this database (every tab's engine on it takes the same). */
  underLock<T>(work: () => Promise<T>): Promise<T>;
  /** The shop the relay at baseUrl named (networkClaim.ts), null before: part of this engine's identity then. */
  relayShop: string | null;
  /** Adds products this engine tracks (shop-wide); resolves with those new to the database. */
  track(productNos: number[]): Promise<number[]>;
}

/** @example const claim = createDatabaseClaim({ ...core, dbName, locks, onReclaim }); await claim.usable(); */
export function createDatabaseClaim(deps: DatabaseClaimDeps): DatabaseClaim {
  const { db, status } = deps;
  const syncLock = `shop-lookup:${deps.dbName}:sync`;
  // the products this engine was asked to track: added to the shop-wide set (trackedProducts.ts) once the database
  // is claimed, and again after clear()
  const ownProducts = new Set(deps.options.products ?? []);
  const identity = identityOf(deps.options.baseUrl, deps.options.auth, deps.options.shopId);
  let known: ShopIdentity | undefined;
  identity.then(
    (i) => (known = i),
    () => undefined,
  );
  /** This engine's identity, with the relay's shop once it named one. */
  const mine = (i: ShopIdentity): ShopIdentity => (self.relayShop === null ? i : { ...i, relayShop: self.relayShop });

  const claim = () =>
    identity
      .then((id) => checkShopIdentity(db, mine(id)))
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

  let ready: Promise<LookupError | null>;

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

  const self: DatabaseClaim = {
    get ready() {
      return ready;
    },
    shop: () => known && mine(known),
    usable,
    forget,
    reclaim,
    check: claim,
    underLock: (work) => deps.locks.request(syncLock, { signal: deps.signal }, work),
    relayShop: null,
    async track(productNos) {
      await usable();
      for (const p of productNos) if (Number.isSafeInteger(p)) ownProducts.add(p);
      // shop-wide: the leader's syncs list them from now on, whichever tab asked
      return addTrackedProducts(db, productNos);
    },
  };
  ready = claim();
  tell(ready);
  return self;
}
