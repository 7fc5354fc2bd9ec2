// The six read-only endpoints of the shop API, validated at this boundary. Path segments that come from users
// are percent-encoded; product and option numbers must be whole numbers.
import { DEFAULT_PAGE_SIZE } from '../defaults';
import { ShopLookupError } from '../errors';
import type { Coupon, IssuedCoupon, ProductOption } from '../types';
import type { ApiError } from './apiError';
import { readListPage, type ListPage } from './envelope';
import type { Transport } from './httpTransport';
import { parseRecord, parseRecords, type RejectedRecord } from '../records/parseRecords';
import { segment } from './pathSegment';
import type { Priority } from './rateLimiter';

export interface CallOptions {
  priority?: Priority;
  signal?: AbortSignal | undefined;
  counter?: { requests: number } | undefined;
  /** Told the HTTP status once the response headers are in (list calls). */
  onHeaders?: ((status: number) => void) | undefined;
}

/** One page of a listing, checked: good records, rejected ones, and the paging the API reported. */
export interface CheckedPage<T> extends Omit<ListPage, 'rows'> {
  records: T[];
  rejected: RejectedRecord[];
  /** Rows in the answer, good and bad. */
  rowCount: number;
}

/** One page of a listing as received: its rows unchecked, and the body text they came in. */
export interface RawPage extends ListPage {
  body: string;
}

/** A single-item answer: the record, null when the API says it does not exist (-11), or a rejection. */
export type ItemAnswer<T> = { record: T; rejected?: undefined } | { record: null; rejected?: RejectedRecord };

export interface ApiClient {
  listCoupons(page: number, o?: CallOptions): Promise<CheckedPage<Coupon>>;
  /** One page of the coupon listing, rows not yet validated (the sync validates only pages that changed). */
  listCouponRows(page: number, o?: CallOptions): Promise<RawPage>;
  getCoupon(couponCode: string, o?: CallOptions): Promise<ItemAnswer<Coupon>>;
  getIssuedCoupon(issuedCouponCode: string, o?: CallOptions): Promise<ItemAnswer<IssuedCoupon>>;
  listProductOptions(productNo: number, page: number, o?: CallOptions): Promise<CheckedPage<ProductOption>>;
  getProductOptionByNo(productNo: number, optionNo: number, o?: CallOptions): Promise<ItemAnswer<ProductOption>>;
  getProductOptionByCode(productNo: number, optionCode: string, o?: CallOptions): Promise<ItemAnswer<ProductOption>>;
}

function wholeNumber(value: number, what: string): string {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ShopLookupError('bad_request', `${what} must be a whole number, got ${JSON.stringify(value)}.`);
  }
  return String(value);
}

/** @example const client = createApiClient({ transport, pageSize: 100 }); const page = await client.listCoupons(1); */
export function createApiClient({
  transport,
  pageSize = DEFAULT_PAGE_SIZE,
}: {
  transport: Transport;
  pageSize?: number;
}): ApiClient {
  const limit = Math.max(1, Math.min(100, pageSize));

  async function list(path: string, page: number, o: CallOptions = {}): Promise<RawPage> {
    const { envelope, status, text, label } = await transport.request({
      path,
      query: { offset: page, limit },
      cls: 'list',
      priority: o.priority ?? 'user',
      signal: o.signal,
      counter: o.counter,
      onHeaders: o.onHeaders,
    });
    return { ...readListPage(envelope, page, status, label), body: text };
  }

  async function item(path: string, o: CallOptions = {}): Promise<unknown | null> {
    try {
      const { envelope } = await transport.request({
        path,
        cls: 'other',
        priority: o.priority ?? 'user',
        signal: o.signal,
        counter: o.counter,
      });
      return envelope.data ?? null;
    } catch (error) {
      if ((error as ApiError).code === 'not_found') return null;
      throw error;
    }
  }

  function checked<T>(page: RawPage, records: T[], rejected: RejectedRecord[]): CheckedPage<T> {
    const { rows, body: _body, ...paging } = page;
    return { ...paging, records, rejected, rowCount: rows.length };
  }

  async function one<K extends 'coupon' | 'issuedCoupon' | 'productOption'>(
    kind: K,
    path: string,
    o: CallOptions | undefined,
    productNo?: number,
  ) {
    const raw = await item(path, o);
    if (raw === null) return { record: null };
    const r = parseRecord(kind, raw, 'data', productNo);
    return r.ok ? { record: r.record } : { record: null, rejected: r.rejected };
  }

  return {
    listCouponRows: (page, o) => list('/v2/shop/coupons', page, o),
    async listCoupons(page, o) {
      const p = await list('/v2/shop/coupons', page, o);
      const { records, rejected } = parseRecords('coupon', p.rows, p.rowsPath);
      return checked(p, records, rejected);
    },
    getCoupon: async (code, o) => one('coupon', `/v2/shop/coupons/${segment(code)}`, o),
    getIssuedCoupon: async (code, o) => one('issuedCoupon', `/v2/shop/issue-coupons/${segment(code)}`, o),
    async listProductOptions(productNo, page, o) {
      const p = await list(`/v2/shop/products/${wholeNumber(productNo, 'product_no')}/options`, page, o);
      const { records, rejected } = parseRecords('productOption', p.rows, p.rowsPath, productNo);
      return checked(p, records, rejected);
    },
    getProductOptionByNo: async (productNo, optionNo, o) =>
      one(
        'productOption',
        `/v2/shop/products/${wholeNumber(productNo, 'product_no')}/options/${wholeNumber(optionNo, 'option_no')}`,
        o,
        productNo,
      ),
    getProductOptionByCode: async (productNo, optionCode, o) =>
      one(
        'productOption',
        `/v2/shop/products/${wholeNumber(productNo, 'product_no')}/options/${segment(optionCode)}`,
        o,
        productNo,
      ),
  };
}
