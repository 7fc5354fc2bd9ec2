// This database's device id: the till, as the relay knows it when no till token names it. Random, made at the first
// use it is needed for, kept in `meta` across reloads; clear() empties `meta`, so a cleared database is a new device.
import { newEntryKey } from './newEntryKey';
import type { DeviceRow, ShopDatabase } from './store';

const DEVICE_KEY = '@device';

/**
 * The device id, made now if there is none (in one transaction: two tabs asking at once get the same one).
 * Inside a transaction that has `meta` read-write, it joins that transaction.
 * @example const device = await deviceIdOf(db); // '9f1c…' (32 hex digits)
 */
export function deviceIdOf(db: ShopDatabase): Promise<string> {
  return db.transaction('rw', db.meta, async () => {
    const row = (await db.meta.get(DEVICE_KEY)) as DeviceRow | undefined;
    if (row) return row.id;
    const id = newEntryKey();
    await db.meta.put({ key: DEVICE_KEY, id });
    return id;
  });
}

/**
 * The device id if one was made, else null (read only).
 * @example if ((await storedDeviceId(db)) === use.device) mine(use);
 */
export async function storedDeviceId(db: ShopDatabase): Promise<string | null> {
  return ((await db.meta.get(DEVICE_KEY)) as DeviceRow | undefined)?.id ?? null;
}
