// How each of the six lookups reads IndexedDB, which confirmations make up its `syncedAt`, which refresh state
// concerns it, and how it is refreshed from the API. One table, so the lookups cannot drift apart.
import type { LookupQuery } from '../../src/protocol';
import type { IndexableType } from 'dexie';
import { typedCode } from '@shop-lookup/shop-api';
import { keysOf, MAX_KEY, MIN_KEY, rangeOf, wholeTable, type Interest } from '../store/storageChanges';
import { metaKey, type ShopDatabase } from '../store/store';
import type { SyncContext } from '../sync/syncContext';

/**
 * The refreshes a plan may run. They live in sync/ and reach the plan from the lazily loaded network chunk
 * (engine/createNetwork.ts re-exports them), so the entry never loads them.
 */
type RefreshUnits = typeof import('../sync/readThrough') &
  Pick<typeof import('../sync/direct/syncProductOptions'), 'syncProductOptions'>;

export interface LookupPlan {
  /** What the lookup answers with when nothing is known locally. */
  empty: null | [];
  /** The object store `request` reads (together with the confirmations, in one transaction: readLocal.ts). */
  store: 'coupons' | 'issuedCoupons' | 'options';
  /** The lookup's data as one IndexedDB request on that store (the one way a lookup reads, see readLocal). */
  request(store: IDBObjectStore, keyRange: typeof IDBKeyRange): IDBRequest;
  /** Lists only: watches of the same list share one read (readCache), under this key. */
  cacheKey?: string;
  /** The primary keys `read` depends on, per table: a write to them makes the watch read again. */
  interest: Interest;
  /** Confirmations that make up `syncedAt` (the latest counts). */
  confirmKeys: string[];
  /** The confirmation of this very item ("known not to exist" counts). */
  itemKey: string;
  /** Refresh-state keys whose fetching/error concern this data; the first is the one its own refresh uses. */
  stateKeys: string[];
  /** Reads the record a confirmation points to when the API answered this item under another code (coupons). */
  readAlias?(db: ShopDatabase, code: string): Promise<unknown>;
  /** The relay or proxy route its refresh asks (`coupon`, `issuedCoupon`, ...): one a relay refused is not asked. */
  route?: string;
  /** A network refresh of this item: 'sync' = the full sync does it; 'none' = nothing refreshes it (never listed). */
  refresh: 'sync' | 'none' | ((ctx: SyncContext, net: RefreshUnits) => Promise<void>);
}

/** The primary keys of one product's options. */
const productKeys = (productNo: number) =>
  rangeOf([productNo, MIN_KEY] as IndexableType, [productNo, MAX_KEY] as IndexableType);

type Parts = Pick<LookupPlan, 'store' | 'request' | 'interest' | 'refresh' | 'route'>;

/** A whole list: [] when unknown, confirmed (and refreshed) as one, and read once for all its watches. */
const listPlan = (list: string, parts: Parts): LookupPlan => ({
  ...parts,
  empty: [],
  cacheKey: list,
  confirmKeys: [list],
  itemKey: list,
  stateKeys: [list],
});

/**
 * One item: null when unknown; confirmed by its own key, or by the list it is part of (whose refresh fetches it too).
 */
const itemPlan = (item: string, list: string | null, parts: Parts & Pick<LookupPlan, 'readAlias'>): LookupPlan => ({
  ...parts,
  empty: null,
  confirmKeys: list === null ? [item] : [list, item],
  itemKey: item,
  stateKeys: list === null ? [item] : [item, list],
});

/** Which coupons an engine keeps (ShopLookupOptions.coupons): the whole list, or only those read by exact code. */
export type CouponMode = 'all' | 'byCode';

/**
 * @param coupons `'byCode'`: the coupon list is never synced, so `coupons()` shows what was read by code (never
 * confirmed as the shop's list, never refreshed) and a coupon is confirmed by its own read alone.
 * @example const local = await readLocal(planLookup({ kind: 'coupon', code: 'WELCOME10' }), db)
 */
export function planLookup(q: LookupQuery, coupons: CouponMode = 'all'): LookupPlan {
  const byCode = coupons === 'byCode';
  switch (q.kind) {
    case 'coupons':
      if (byCode) {
        return {
          empty: [],
          cacheKey: metaKey.coupons,
          store: 'coupons',
          request: (store) => store.getAll(),
          interest: { coupons: wholeTable() },
          confirmKeys: [],
          itemKey: metaKey.coupons,
          stateKeys: [],
          refresh: 'none',
        };
      }
      return listPlan(metaKey.coupons, {
        store: 'coupons',
        request: (store) => store.getAll(),
        interest: { coupons: wholeTable() },
        refresh: 'sync',
      });
    case 'coupon': {
      // a code as typed: the form validateCoupon uses too (pathSegment.ts)
      const code = typedCode(q.code);
      return itemPlan(metaKey.coupon(code), byCode ? null : metaKey.coupons, {
        route: 'coupon',
        store: 'coupons',
        request: (store) => store.get(code),
        interest: { coupons: keysOf(code) },
        readAlias: (db, alias) => db.coupons.get(alias),
        refresh: (ctx, net) => net.refreshCoupon(ctx, code),
      });
    }
    case 'issuedCoupon': {
      const code = typedCode(q.code);
      return itemPlan(metaKey.issued(code), null, {
        route: 'issuedCoupon',
        store: 'issuedCoupons',
        request: (store) => store.get(code),
        interest: { issuedCoupons: keysOf(code) },
        refresh: (ctx, net) => net.refreshIssuedCoupon(ctx, code),
      });
    }
    case 'productOptions':
      return listPlan(metaKey.options(q.productNo), {
        route: 'productOptions',
        store: 'options',
        request: (store, keyRange) => store.getAll(keyRange.bound([q.productNo, MIN_KEY], [q.productNo, MAX_KEY])),
        interest: { options: productKeys(q.productNo) },
        refresh: (ctx, net) => net.syncProductOptions(ctx, q.productNo),
      });
    case 'productOptionByNo':
      return itemPlan(metaKey.optionNo(q.productNo, q.optionNo), metaKey.options(q.productNo), {
        route: 'productOption',
        store: 'options',
        request: (store) => store.get([q.productNo, q.optionNo]),
        interest: { options: keysOf([q.productNo, q.optionNo]) },
        refresh: (ctx, net) => net.refreshOptionByNo(ctx, q.productNo, q.optionNo),
      });
    case 'productOptionByCode':
      return itemPlan(metaKey.optionCode(q.productNo, q.optionCode), metaKey.options(q.productNo), {
        route: 'productOption',
        store: 'options',
        // the first by primary key among equals, as Dexie's first() over the index
        request: (store) => store.index('[product_no+code]').get([q.productNo, q.optionCode]),
        // read through an index, but any option of the product may be the one that gets (or loses) this code
        interest: { options: productKeys(q.productNo) },
        refresh: (ctx, net) => net.refreshOptionByCode(ctx, q.productNo, q.optionCode),
      });
  }
}
