// Coupons and issued coupons whose latest record could not be read. A listing (or a read-through, or the relay's
// feed) that carries a record failing the schema keeps the copy stored before, but must not confirm it: the shop
// may have stopped that coupon (or the issued coupon was used), and the new record that says so is the one we
// cannot read. The mark sits on the code's own confirmation row (`coupon:<code>`, `issued:<code>`), which lookups
// and the checkout read anyway; see UnreadableMark.
import { latestConfirmation, metaKey, type MetaRow, type ShopDatabase, type UnreadableMark } from './store';

/** One unreadable record: the code it is for, and why it was rejected. */
export interface UnreadableRecord {
  code: string;
  message: string;
}

const isMark = (row: MetaRow | undefined): row is UnreadableMark => row !== undefined && 'unreadable' in row;

/**
 * Marks these codes unreadable, in the running transaction (it must include `meta`); call before the listing's or
 * feed's own confirmation is written. A code already marked keeps its mark (and so its true age), now owned by
 * `listing` if given.
 * @example await markUnreadable(db, [{ code: 'WELCOME10', message: 'apply_sale_percent: expected an integer' }],
 * Date.now());
 */
export async function markUnreadable(
  db: ShopDatabase,
  records: UnreadableRecord[],
  at: number,
  listing?: string,
): Promise<void> {
  if (records.length === 0) return;
  const [list, ...rows] = await db.meta.bulkGet([metaKey.coupons, ...records.map((r) => metaKey.coupon(r.code))]);
  const marks = records.flatMap(({ code, message }, i): UnreadableMark[] => {
    const row = rows[i];
    if (isMark(row))
      return listing === undefined || row.unreadable.listing === listing
        ? []
        : [{ ...row, unreadable: { ...row.unreadable, listing } }];
    // the copy held is as old as its last confirmation: the listing before, or its own lookup
    const mark = markOf(metaKey.coupon(code), latestConfirmation([list, row]), row, message, at);
    if (listing !== undefined) mark.unreadable.listing = listing;
    return [mark];
  });
  if (marks.length > 0) await db.meta.bulkPut(marks);
}

/**
 * Marks an issued coupon's code unreadable (its `issued:<code>` row), in the running transaction (it must include
 * `meta`): the copy held, if any, is confirmed by nothing from now on, as a coupon's is. A code already marked keeps
 * its mark. Issued coupons are read one by one (read-through, prefetchIssuedCoupons), so a readable record's
 * confirmation of the same row ends it.
 * @example await markIssuedUnreadable(db, { code: 'IC-7F3K-2Q9M', message: 'apply_sale_percent: expected an integer'
 * }, Date.now());
 */
export async function markIssuedUnreadable(
  db: ShopDatabase,
  { code, message }: UnreadableRecord,
  at: number,
): Promise<void> {
  const row = await db.meta.get(metaKey.issued(code));
  if (isMark(row)) return;
  await db.meta.put(markOf(metaKey.issued(code), latestConfirmation([row]), row, message, at));
}

/** A new mark on `key`, keeping what the row it replaces confirmed besides (an alias). */
function markOf(
  key: string,
  confirmedAt: number | null,
  row: MetaRow | undefined,
  message: string,
  at: number,
): UnreadableMark {
  const mark: UnreadableMark = { key, confirmedAt, unreadable: { since: at, message } };
  if (row && 'code' in row && typeof row.code === 'string') mark.code = row.code;
  return mark;
}

/** Above this many codes the marks are read all at once (they are few) instead of a row per code. */
const READ_EACH_UP_TO = 64;

/**
 * Ends the marks of `codes` (a readable record arrived, or the code is gone), in the running transaction. A few
 * codes (a live change) are looked up one by one; a relay snapshot's chunk of 10,000 reads the marks instead: a
 * row per code made a till's first sync from a relay about a third slower (0.62× bulkPut against 0.92×).
 */
export async function clearUnreadable(db: ShopDatabase, codes: string[]): Promise<void> {
  if (codes.length === 0) return;
  if (codes.length <= READ_EACH_UP_TO) {
    await clearMarks(db, (await db.meta.bulkGet(codes.map(metaKey.coupon))).filter(isMark));
    return;
  }
  const wanted = new Set(codes.map(metaKey.coupon));
  await clearMarks(
    db,
    (await unreadableMarks(db)).filter((m) => wanted.has(m.key)),
  );
}

/** Every code marked unreadable now (the per-code rows, few: codes looked up one by one, and the marked). */
export function unreadableMarks(db: ShopDatabase): Promise<UnreadableMark[]> {
  const prefix = metaKey.coupon('');
  return db.meta.where(':id').between(prefix, `${prefix}\uffff`).filter(isMark).toArray() as Promise<UnreadableMark[]>;
}

/** Removes these marks, keeping what their rows confirmed besides (the copy's last confirmation, an alias). */
export async function clearMarks(db: ShopDatabase, marks: UnreadableMark[]): Promise<void> {
  const keep = marks.filter((m) => m.confirmedAt !== null || m.code !== undefined);
  const drop = marks.filter((m) => m.confirmedAt === null && m.code === undefined);
  if (keep.length > 0)
    await db.meta.bulkPut(
      keep.map(({ unreadable: _u, confirmedAt, ...row }) => ({ ...row, confirmedAt: confirmedAt ?? 0 })),
    );
  if (drop.length > 0) await db.meta.bulkDelete(drop.map((m) => m.key));
}
