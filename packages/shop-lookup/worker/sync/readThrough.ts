// Read-through of single items: fetched when looked up while online, then kept for offline use. A "does not
// exist" answer (-11) is remembered too, so an offline lookup can tell "confirmed gone" from "never seen".
import { ShopLookupError } from '../../src/protocol';
import type { Coupon, IssuedCoupon, ProductOption } from '../../src/protocol';
import { type ItemAnswer, rejectionError, sameRecord } from '@shop-lookup/shop-api';
import { confirm, metaKey, type ShopDatabase } from '../store/store';
import type { SyncContext } from './syncContext';
import { noteCouponRefresh } from './direct/couponListing';
import { assertShop } from '../store/assertShop';
import { markIssuedUnreadable, markUnreadable } from '../store/unreadableMarks';
import { syncProductOptions } from './direct/syncProductOptions';

/** Confirms keys, if the database is still this shop's. */
function confirmChecked(ctx: SyncContext, keys: string[], at: number) {
  return ctx.db.transaction('rw', ctx.db.meta, async () => {
    await assertShop(ctx.db, ctx.shop);
    await confirm(ctx.db, keys, at);
  });
}

/** A rejected item is reported and thrown: the lookup shows the error, the good local copy stays. */
function checkRejected<T>(ctx: SyncContext, where: string, answer: ItemAnswer<T>): T | null {
  ctx.report.fetched++;
  if (!answer.rejected) return answer.record;
  ctx.report.rejected++;
  const error = rejectionError(where, answer.rejected);
  ctx.report.errors.push(error);
  throw new ShopLookupError(error.code, error.message, { issues: error.issues ?? [] });
}

/** @example await refreshCoupon(ctx, 'WELCOME10'); */
export async function refreshCoupon(ctx: SyncContext, code: string): Promise<void> {
  const at = ctx.now();
  const answer = await ctx.call(() => ctx.client.getCoupon(code, { priority: ctx.priority, counter: ctx.report }));
  const { db } = ctx;
  let record: Coupon | null;
  try {
    record = checkRejected(ctx, `GET /v2/shop/coupons/${code}`, answer);
  } catch (error) {
    // the copy kept (if any) is confirmed by nothing from now on: the newer record is the one we cannot read
    await db.transaction('rw', db.meta, async () => {
      await assertShop(db, ctx.shop);
      await markUnreadable(db, [{ code, message: (error as Error).message }], at);
    });
    throw error;
  }
  await db.transaction('rw', [db.coupons, db.couponHashes, db.meta], async () => {
    await assertShop(db, ctx.shop);
    const current = await db.coupons.get(record?.coupon_code ?? code);
    const codes = record && record.coupon_code !== code ? [code, record.coupon_code] : [code];
    if (record && !sameRecord(current, record)) {
      await db.coupons.put(record);
      await noteCouponRefresh(db, codes, at, { code: record.coupon_code, held: current !== undefined });
      ctx.report.written++;
    } else if (!record && current) {
      await db.coupons.delete(code);
      await noteCouponRefresh(db, codes, at, { code, held: true });
      ctx.report.deleted++;
    } else {
      await noteCouponRefresh(db, codes, at);
    }
    await confirm(db, [metaKey.coupon(code)], at);
    // answered under another code: both codes are confirmed, and a lookup of the one asked follows to the record
    if (record && record.coupon_code !== code) {
      await confirm(db, [metaKey.coupon(record.coupon_code)], at);
      await db.meta.put({ key: metaKey.coupon(code), confirmedAt: at, code: record.coupon_code });
    }
  });
}

/** @example await refreshIssuedCoupon(ctx, 'IC-7F3K-2Q9M'); */
export async function refreshIssuedCoupon(ctx: SyncContext, code: string): Promise<void> {
  const at = ctx.now();
  const answer = await ctx.call(() =>
    ctx.client.getIssuedCoupon(code, { priority: ctx.priority, counter: ctx.report }),
  );
  const { db } = ctx;
  let record: IssuedCoupon | null;
  try {
    record = checkRejected(ctx, `GET /v2/shop/issue-coupons/${code}`, answer);
  } catch (error) {
    // as for a coupon: the copy kept (if any) is confirmed by nothing from now on (it may have been used since)
    await db.transaction('rw', db.meta, async () => {
      await assertShop(db, ctx.shop);
      await markIssuedUnreadable(db, { code, message: (error as Error).message }, at);
    });
    throw error;
  }
  await db.transaction('rw', [db.issuedCoupons, db.meta], async () => {
    await assertShop(db, ctx.shop);
    const current = await db.issuedCoupons.get(code);
    if (record && !sameRecord(current, record)) {
      await db.issuedCoupons.put(record, code);
      ctx.report.written++;
    } else if (!record && current) {
      await db.issuedCoupons.delete(code);
      ctx.report.deleted++;
    }
    await confirm(db, [metaKey.issued(code)], at);
  });
}

async function storeOption(ctx: SyncContext, db: ShopDatabase, option: ProductOption, at: number) {
  await db.transaction('rw', [db.options, db.meta], async () => {
    await assertShop(db, ctx.shop);
    const current = await db.options.get([option.product_no, option.no]);
    if (!sameRecord(current, option)) {
      await db.options.put(option);
      ctx.report.written++;
    }
    const keys = [metaKey.optionNo(option.product_no, option.no)];
    if (typeof option.code === 'string') keys.push(metaKey.optionCode(option.product_no, option.code));
    await confirm(db, keys, at);
  });
}

/**
 * Endpoints 5 and 6 share one path, and the service alone decides whether the segment is a number or a code.
 * So an answer counts only if its `no` (or `code`) is what was asked; otherwise, and for a "not found" that
 * may have been read the other way, the product's whole option list (which has both) decides.
 * `asked` is an option number (a number) or an option code (a string, even one that looks like a number).
 */
async function refreshOption(ctx: SyncContext, productNo: number, asked: number | string): Promise<void> {
  const at = ctx.now();
  const o = { priority: ctx.priority, counter: ctx.report };
  const answer = await ctx.call(() =>
    typeof asked === 'number'
      ? ctx.client.getProductOptionByNo(productNo, asked, o)
      : ctx.client.getProductOptionByCode(productNo, asked, o),
  );
  const record = checkRejected(ctx, `GET /v2/shop/products/${productNo}/options/${asked}`, answer);
  if (record && (typeof asked === 'number' ? record.no : record.code) === asked)
    return storeOption(ctx, ctx.db, record, at);
  await syncProductOptions(ctx, productNo);
  const key = typeof asked === 'number' ? metaKey.optionNo(productNo, asked) : metaKey.optionCode(productNo, asked);
  await confirmChecked(ctx, [key], at);
}

/** @example await refreshOptionByNo(ctx, 13805, 12); */
export const refreshOptionByNo = (ctx: SyncContext, productNo: number, optionNo: number): Promise<void> =>
  refreshOption(ctx, productNo, optionNo);

/** @example await refreshOptionByCode(ctx, 13805, '12'); // never answered with option number 12 */
export const refreshOptionByCode = (ctx: SyncContext, productNo: number, optionCode: string): Promise<void> =>
  refreshOption(ctx, productNo, optionCode);
