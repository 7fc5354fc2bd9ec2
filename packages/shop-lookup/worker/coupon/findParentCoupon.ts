// The coupon an issued coupon was issued from (its `coupon_code`), as far as this till knows: an issued coupon is
// usable only while its coupon is, and the shop stops or deletes the coupon, not each issued copy of it.
import type { Coupon, IssuedCoupon } from '../../src/protocol';
import { latestConfirmation, metaKey, type Confirmation, type MetaRow, type ShopDatabase } from '../store/store';

/**
 * What the till knows of an issued coupon's coupon. `held`: its record is stored (the coupon listing, or its own
 * lookup). `gone`: the API said after `since` that it does not exist, later than it last vouched for the issued
 * coupon (a complete listing without it, or its own lookup answering "does not exist"). `unreadable`: its latest
 * record could not be read and no copy is held. `unknown`: none of these (no listing on this device, a listing
 * older than the issued coupon's answer, or no `coupon_code`): the issued coupon's own fields decide.
 */
export type ParentCoupon =
  | { state: 'held'; code: string; record: Coupon; syncedAt: number | null; unreadable?: string }
  | { state: 'gone'; code: string; since: number }
  | { state: 'unreadable'; code: string; message: string }
  | { state: 'unknown'; code: string | null };

const markOf = (row: MetaRow | undefined) => (row && 'unreadable' in row ? row.unreadable.message : null);

/** The coupon `code` as stored, in one read: its record (following an alias), its confirmations and its mark. */
async function readParent(db: ShopDatabase, code: string, issuedAt: number | null): Promise<ParentCoupon> {
  return db.transaction('r', [db.coupons, db.meta], async () => {
    const [direct, [list, own]] = await Promise.all([
      db.coupons.get(code),
      db.meta.bulkGet([metaKey.coupons, metaKey.coupon(code)]),
    ]);
    const alias = direct ? undefined : (own as Confirmation | undefined)?.code;
    const [record, aliasRow] =
      alias !== undefined
        ? await Promise.all([db.coupons.get(alias), db.meta.get(metaKey.coupon(alias))])
        : [direct, undefined];
    const unreadable = markOf(own) ?? markOf(aliasRow);
    if (record) {
      const held: ParentCoupon = { state: 'held', code, record, syncedAt: latestConfirmation([list, own, aliasRow]) };
      if (unreadable !== null) held.unreadable = unreadable;
      return held;
    }
    if (unreadable !== null) return { state: 'unreadable', code, message: unreadable };
    // absent: the API's latest word without it (the complete listing, or its own lookup) counts only when it came
    // after the API last answered the issued coupon, which the coupon existed for
    const absentSince = alias === undefined ? latestConfirmation([list, own]) : null;
    return absentSince !== null && (issuedAt === null || absentSince > issuedAt)
      ? { state: 'gone', code, since: absentSince }
      : { state: 'unknown', code };
  });
}

/**
 * The coupon of `issued` as far as the till knows. When that is `unknown` and `askApi` is given (online), the API is
 * asked for the coupon (a read-through that stores it, or confirms it gone; true when it answered) and the answer
 * read back; a failed ask leaves it `unknown`.
 * @example const parent = await findParentCoupon(db, issued, issuedSyncedAt, online ? (code) => refresh(code) : null);
 */
export async function findParentCoupon(
  db: ShopDatabase,
  issued: IssuedCoupon,
  issuedAt: number | null,
  askApi: ((code: string) => Promise<boolean>) | null,
): Promise<ParentCoupon> {
  const code = typeof issued.coupon_code === 'string' && issued.coupon_code.trim() !== '' ? issued.coupon_code : null;
  if (code === null) return { state: 'unknown', code: null };
  const known = await readParent(db, code, issuedAt);
  if (known.state !== 'unknown' || askApi === null || !(await askApi(code))) return known;
  // the API answered just now: its "does not exist" is later than anything it said of the issued coupon
  return readParent(db, code, null);
}
