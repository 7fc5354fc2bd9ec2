// Other tills' uses of an issued coupon, as the relay's feed last told this till (store: `sharedUses`, written by the
// feed as it comes, live while online). This till's own uses are left out: those of its device, and those whose
// journal key it holds (accepted here before a clear() made this database a new device).
import type { OtherTillUse } from '../../src/protocol';
import { storedDeviceId } from '../store/deviceId';
import type { ShopDatabase } from '../store/store';

/** @example const uses = await findOtherTillUses(db, 'IC-0000-OPEN'); // [{ till: 'front-1', device, at, orderId }] */
export function findOtherTillUses(db: ShopDatabase, code: string): Promise<OtherTillUse[]> {
  return db.transaction('r', [db.sharedUses, db.meta, db.tillUses, db.journal], async () => {
    const record = await db.sharedUses.get(code);
    if (!record || record.uses.length === 0) return [];
    const device = await storedDeviceId(db);
    const entries = record.uses.map((u) => u.entry);
    const [kept, journaled] = await Promise.all([
      db.tillUses.bulkGet(entries),
      db.journal.where('key').anyOf(entries).keys(),
    ]);
    const mine = new Set([...kept.flatMap((u) => (u ? [u.key] : [])), ...(journaled as string[])]);
    return record.uses
      .filter((u) => u.device !== device && !mine.has(u.entry))
      .map(({ till, device: d, at, orderId }) => ({ till, device: d, at, orderId }));
  });
}
