// List pages serialised once (the `cacheListPages` option): the JSON text of a page's `data` is kept and sent
// again while that page's rows are the same objects. For benchmarks: the real API runs on other machines, so its
// CPU is not the client's; a mock on the client's own cores that serialised 100 rows for each of a listing's 1,000
// requests took a share of the machine the client's figures then paid for.
import { listData, type ListShape, type Paging } from './paging';
import type { WireRecord } from './types';

export interface ListPageCache {
  /**
   * The JSON text of `listData(rows, paging, shape)`: serialised once, then kept while `rows` has the same length
   * and the page the same row objects (upsertCoupon replaces a row: seen; a row changed in place: not seen).
   */
  dataText(rows: WireRecord[], paging: Paging, shape: ListShape): string;
}

interface Kept {
  total: number;
  rows: WireRecord[];
  text: string;
}

/**
 * @example const cache = createListPageCache(); const text = cache.dataText(state.data.coupons, { page: 1, limit: 100
 * }, options);
 */
export function createListPageCache(): ListPageCache {
  // by the list itself: a replaced data set (a new array) starts afresh, and the old one's pages go with it
  const byList = new WeakMap<WireRecord[], Map<string, Kept>>();
  return {
    dataText(rows, paging, shape) {
      if (shape.listShape === 'bare') return JSON.stringify(listData(rows, paging, shape));
      const key = `${paging.page}/${paging.limit}/${shape.dataCountAs}`;
      let pages = byList.get(rows);
      if (!pages) byList.set(rows, (pages = new Map()));
      const start = (paging.page - 1) * paging.limit;
      const kept = pages.get(key);
      if (kept && kept.total === rows.length && kept.rows.every((row, i) => row === rows[start + i])) return kept.text;
      const text = JSON.stringify(listData(rows, paging, shape));
      pages.set(key, { total: rows.length, rows: rows.slice(start, start + paging.limit), text });
      return text;
    },
  };
}
