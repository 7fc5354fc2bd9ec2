// How each of the six lookups reads IndexedDB, which confirmations make up its `syncedAt`, which refresh state
// concerns it, and how it is refreshed from the API. One table, so the lookups cannot drift apart.
import type { LookupQuery } from '../src/protocol';
import { metaKey, productRange, type ShopDatabase } from './store';
import { refreshCoupon, refreshIssuedCoupon, refreshOptionByCode, refreshOptionByNo } from './readThrough';
import type { SyncContext } from './syncContext';
import { syncProductOptions } from './syncProductOptions';

export interface LookupPlan {
  /** What the lookup answers with when nothing is known locally. */
  empty: null | [];
  read(db: ShopDatabase): Promise<unknown>;
  /** Confirmations that make up `syncedAt` (the latest counts). */
  confirmKeys: string[];
  /** The confirmation of this very item ("known not to exist" counts). */
  itemKey: string;
  /** Refresh-state keys whose fetching/error concern this data; the first is the one its own refresh uses. */
  stateKeys: string[];
  /** A network refresh of this item: 'sync' = the full sync does it. */
  refresh: 'sync' | ((ctx: SyncContext) => Promise<void>);
}

/** @example planLookup({ kind: 'coupon', code: 'WELCOME10' }).read(db) */
export function planLookup(q: LookupQuery): LookupPlan {
  switch (q.kind) {
    case 'coupons':
      return {
        empty: [],
        read: (db) => db.coupons.toArray(),
        confirmKeys: [metaKey.coupons],
        itemKey: metaKey.coupons,
        stateKeys: [metaKey.coupons],
        refresh: 'sync',
      };
    case 'coupon': {
      const item = metaKey.coupon(q.code);
      return {
        empty: null,
        read: (db) => db.coupons.get(q.code),
        confirmKeys: [metaKey.coupons, item],
        itemKey: item,
        stateKeys: [item, metaKey.coupons],
        refresh: (ctx) => refreshCoupon(ctx, q.code),
      };
    }
    case 'issuedCoupon': {
      const item = metaKey.issued(q.code);
      return {
        empty: null,
        read: (db) => db.issuedCoupons.get(q.code),
        confirmKeys: [item],
        itemKey: item,
        stateKeys: [item],
        refresh: (ctx) => refreshIssuedCoupon(ctx, q.code),
      };
    }
    case 'productOptions': {
      const list = metaKey.options(q.productNo);
      return {
        empty: [],
        read: (db) => productRange(db, q.productNo).toArray(),
        confirmKeys: [list],
        itemKey: list,
        stateKeys: [list],
        refresh: (ctx) => syncProductOptions(ctx, q.productNo),
      };
    }
    case 'productOptionByNo': {
      const list = metaKey.options(q.productNo);
      const item = metaKey.optionNo(q.productNo, q.optionNo);
      return {
        empty: null,
        read: (db) => db.options.get([q.productNo, q.optionNo]),
        confirmKeys: [list, item],
        itemKey: item,
        stateKeys: [item, list],
        refresh: (ctx) => refreshOptionByNo(ctx, q.productNo, q.optionNo),
      };
    }
    case 'productOptionByCode': {
      const list = metaKey.options(q.productNo);
      const item = metaKey.optionCode(q.productNo, q.optionCode);
      return {
        empty: null,
        read: (db) => db.options.where('[product_no+code]').equals([q.productNo, q.optionCode]).first(),
        confirmKeys: [list, item],
        itemKey: item,
        stateKeys: [item, list],
        refresh: (ctx) => refreshOptionByCode(ctx, q.productNo, q.optionCode),
      };
    }
  }
}
