// A storefront's opening reads (coupons: 'byCode'): its tracked products' option lists are asked for as the
// engine starts, beside opening the database and the relay's discovery, not after them. Each answer is the start
// sync's own first page of that product (taken once, by the first of the start's syncs or lookup refreshes that
// reads it), and, complete, what a productOptions lookup shows while the database is still opening
// (engine/answerWhileOpening.ts). Nothing is written here: the sync stores what it takes, under its usual checks.
import type { LookupResult, ProductOption } from '../../src/protocol';
import type { ApiClient, CheckedPage } from '@shop-lookup/shop-api';

/** One product's opening read: when it was asked (its data is the API's as of then) and its first page. */
interface OpeningRead {
  at: number;
  page: Promise<CheckedPage<ProductOption>>;
}

export interface OpeningReads {
  /** Resolves once every opening read has answered (or failed). */
  readonly settled: Promise<void>;
  /** This product's opening read, once; undefined when none was sent, it was taken, or the reads ended. */
  take(productNo: number): OpeningRead | undefined;
  /**
   * What a productOptions lookup of this product may show before the database is open: the complete list, as of
   * the read. Null when there is none (not read, refused, unreachable, more than one page, a record rejected).
   */
  answer(productNo: number): Promise<LookupResult<ProductOption[]> | null>;
  /** No more takes: the start is over, or the host asked for a sync (which must read the API as of its ask). */
  end(): void;
  /** Some opening read waits to be taken (and stored): the start's sync is due, however fresh the data is. */
  readonly untaken: boolean;
}

export interface OpeningReadsDeps {
  client: ApiClient;
  now: () => number;
  signal?: AbortSignal | undefined;
}

/** The page is the whole list, every row readable, no option twice: what syncProductOptions would store. */
function wholeList(p: CheckedPage<ProductOption>): ProductOption[] | null {
  const last = p.totalPages !== null ? p.page >= p.totalPages : p.rowsPath === 'data' || p.rowCount === 0;
  if (!last || p.rejected.length > 0) return null;
  const nos = new Set(p.records.map((r) => r.no));
  if (nos.size !== p.records.length) return null;
  // as IndexedDB lists them (by [product_no, no])
  return [...p.records].sort((a, b) => a.no - b.no);
}

/** @example const opening = startOpeningReads([13805], { client, now }); opening.answer(13805).then(show); */
export function startOpeningReads(productNos: readonly number[], deps: OpeningReadsDeps): OpeningReads {
  const unique = [...new Set(productNos.filter((n) => Number.isSafeInteger(n) && n >= 0))];
  const reads = new Map<number, OpeningRead>();
  for (const productNo of unique) {
    const at = deps.now();
    const page = deps.client.listProductOptions(productNo, 1, { priority: 'user', signal: deps.signal });
    page.catch(() => undefined); // whoever takes it sees the failure (and asks again)
    reads.set(productNo, { at, page });
  }
  const settled = Promise.allSettled([...reads.values()].map((r) => r.page)).then(() => undefined);
  const answers = new Map(
    [...reads].map(([productNo, read]) => [
      productNo,
      read.page.then(
        (p): LookupResult<ProductOption[]> | null => {
          const data = wholeList(p);
          return data && { data, syncedAt: read.at, fetching: false, offline: false, error: null };
        },
        () => null,
      ),
    ]),
  );
  let ended = false;
  return {
    settled,
    take(productNo) {
      if (ended) return undefined;
      const read = reads.get(productNo);
      reads.delete(productNo);
      return read;
    },
    answer: (productNo) => answers.get(productNo) ?? Promise.resolve(null),
    end() {
      ended = true;
      reads.clear();
    },
    get untaken() {
      return !ended && reads.size > 0;
    },
  };
}
