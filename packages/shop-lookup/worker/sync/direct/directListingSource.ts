// The shop API listed page by page: every coupon page (unless the engine keeps coupons by code only), then each
// tracked product's option list (as before relays).
import { confirm, metaKey, type ShopDatabase } from '../../store/store';
import { syncCoupons } from './syncCoupons';
import { syncProductOptions } from './syncProductOptions';
import type { SyncSource } from '../syncSource';

/**
 * @param listCoupons false (`coupons: 'byCode'`): the coupon list is never asked for, only the options.
 * @example const source = createDirectListingSource(db, now); await source.syncAll(run, [13805]);
 */
export function createDirectListingSource(db: ShopDatabase, now: () => number, listCoupons = true): SyncSource {
  return {
    kind: 'direct',
    async syncAll(run, products) {
      const { ctx } = run;
      let go = listCoupons ? await run.unit(metaKey.coupons, () => syncCoupons(ctx)) : true;
      let optionsDone = 0;
      for (const [i, productNo] of products.entries()) {
        if (!go) break;
        ctx.progress?.('options', i, products.length);
        go = await run.unit(metaKey.options(productNo), () => syncProductOptions(ctx, productNo));
        if (go && ctx.report.complete) optionsDone++;
      }
      if (products.length === 0 || optionsDone !== products.length) return null;
      const at = now();
      await confirm(db, ['options'], at).catch(() => undefined);
      return at;
    },
    async syncProducts(run, products) {
      for (const productNo of products) {
        if (!(await run.unit(metaKey.options(productNo), () => syncProductOptions(run.ctx, productNo)))) break;
      }
    },
  };
}
