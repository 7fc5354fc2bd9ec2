// The products whose options every full sync lists: one set per shop database, kept in IndexedDB, so that whichever
// engine leads (any tab) syncs the products every tab asked for, and the set outlives a reload. The one place that
// reads and writes it.
import { metaKey, type ShopDatabase, type TrackedProducts } from './store';

/**
 * The tracked product numbers, ascending.
 * @example const products = await readTrackedProducts(db); // [13801, 13805]
 */
export async function readTrackedProducts(db: ShopDatabase): Promise<number[]> {
  const row = (await db.meta.get(metaKey.products)) as TrackedProducts | undefined;
  return row?.products ?? [];
}

/**
 * Adds product numbers to the set (whole numbers only; the others are ignored) in one transaction, so two tabs
 * adding at once both land. Returns the ones that were not tracked yet.
 * @example const added = await addTrackedProducts(db, [13805]); if (added.length) await syncProducts(added);
 */
export async function addTrackedProducts(db: ShopDatabase, productNos: readonly number[]): Promise<number[]> {
  const wanted = productNos.filter((p) => Number.isSafeInteger(p) && p >= 0);
  if (wanted.length === 0) return [];
  return db.transaction('rw', db.meta, async () => {
    const products = new Set(await readTrackedProducts(db));
    const added = [...new Set(wanted)].filter((p) => !products.has(p));
    if (added.length > 0) {
      for (const p of added) products.add(p);
      await db.meta.put({ key: metaKey.products, products: [...products].sort((a, b) => a - b) });
    }
    return added;
  });
}
