// The options of one product: the whole list (GET /v2/shop/products/{no}/options, all pages), applied in one
// transaction so readers see the old list or the new one. A product the API no longer knows loses its options.
import { ShopLookupError } from '../../../src/protocol';
import type { ProductOption } from '../../../src/protocol';
import { type ApiError, rejectionError, sameRecord } from '@shop-lookup/shop-api';
import { assertShop } from '../../store/assertShop';
import { confirm, metaKey, productRange } from '../../store/store';
import type { SyncContext } from '../syncContext';

/** Writes a product's complete option list: changed options in, unlisted ones out (unless `keep` says so). */
async function applyOptions(
  ctx: SyncContext,
  productNo: number,
  records: ProductOption[],
  keep: Set<number> | 'all',
  at: number,
) {
  const { db } = ctx;
  return db.transaction('rw', [db.options, db.meta], async () => {
    await assertShop(db, ctx.shop);
    const current = await productRange(db, productNo).toArray();
    const byNo = new Map(current.map((o) => [o.no, o]));
    const changed = records.filter((r) => !sameRecord(byNo.get(r.no), r));
    const listed = new Set(records.map((r) => r.no));
    const gone =
      keep === 'all'
        ? []
        : current.filter((o) => !listed.has(o.no) && !keep.has(o.no)).map((o): [number, number] => [productNo, o.no]);
    if (changed.length > 0) await db.options.bulkPut(changed);
    if (gone.length > 0) await db.options.bulkDelete(gone);
    await confirm(db, [metaKey.options(productNo)], at);
    return { written: changed.length, deleted: gone.length };
  });
}

/**
 * Syncs the options of `productNo`. Throws when the list could not be read completely (local data stays).
 * @example await syncProductOptions(ctx, 13805);
 */
export async function syncProductOptions(ctx: SyncContext, productNo: number): Promise<void> {
  const { client, report } = ctx;
  // a storefront's start asked for the first page already (openingReads.ts): its answer is this sync's, as of then
  const opening = ctx.opening?.take(productNo);
  const startedAt = opening?.at ?? ctx.now();
  if (opening) report.requests++;
  const records: ProductOption[] = [];
  const keep = new Set<number>();
  let blind = false;
  for (let page = 1; ; page++) {
    let p: Awaited<ReturnType<typeof client.listProductOptions>>;
    try {
      const ask = () =>
        client.listProductOptions(productNo, page, { priority: ctx.priority, signal: ctx.signal, counter: report });
      // (an opening read that failed is asked again, under this work's retry policy)
      p = page === 1 && opening ? await opening.page.catch(() => ctx.call(ask)) : await ctx.call(ask);
    } catch (error) {
      if ((error as ApiError).code !== 'not_found' || page > 1) throw error;
      // the API does not know this product (any more): it has no options
      const { deleted } = await applyOptions(ctx, productNo, [], new Set(), startedAt);
      report.deleted += deleted;
      return;
    }
    report.fetched += p.rowCount;
    records.push(...p.records);
    for (const r of p.rejected) {
      report.rejected++;
      report.errors.push(rejectionError(`GET /v2/shop/products/${productNo}/options`, r));
      const no = Number(r.key);
      if (r.key === null || !Number.isSafeInteger(no)) blind = true;
      else keep.add(no);
    }
    const last = p.totalPages !== null ? page >= p.totalPages : p.rowsPath === 'data' || p.rowCount === 0;
    if (last) break;
  }
  const nos = records.map((r) => r.no);
  const repeated = nos.find((n, i) => nos.indexOf(n) !== i);
  if (repeated !== undefined) {
    throw new ShopLookupError(
      'inconsistent_listing',
      `The option list of product ${productNo} names option ${repeated} twice; the last complete list is kept.`,
    );
  }
  const { written, deleted } = await applyOptions(ctx, productNo, records, blind ? 'all' : keep, startedAt);
  report.written += written;
  report.deleted += deleted;
}
