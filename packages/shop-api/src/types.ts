// The shop API's data as the library reads it: records, errors as data, rate limits, credentials (types only).
/**
 * A coupon as the shop API sent it. Every field that arrived is kept, including ones the spec does not list.
 * Integers that arrived as strings are numbers here; booleans that arrived as "Y"/"N" or 1/0 are booleans.
 * Dates and `use_period` are kept exactly as received (their format is not specified upstream).
 * @example
 * const c: Coupon = { coupon_code: 'WELCOME10', apply_sale_percent: 10, status: 'progress' };
 */
export interface Coupon {
  coupon_code: string;
  status?: string | null;
  apply_sale_price?: number | null;
  apply_sale_percent?: number | null;
  apply_sale_type_max_price?: number | null;
  apply_sale_type_minimum_price?: number | null;
  name?: string | null;
  type?: string | null;
  type_coupon_create_count?: number | null;
  type_coupon_use_count?: number | null;
  use_period?: string | number | null;
  create_date?: string | number | null;
  edit_date?: string | number | null;
  is_duplication?: boolean | null;
  use_app?: boolean | null;
  [field: string]: unknown;
}

/**
 * An issued coupon: the coupon fields plus the issue fields that arrive (`coupon_issue_code`, `shop_order_code`,
 * `use_date`, ...). `coupon_code` may be missing on an issued coupon.
 * @example
 * const ic: IssuedCoupon = { coupon_issue_code: 'IC-7F3K-2Q9M', status: 'progress', apply_sale_price: 3000 };
 */
export interface IssuedCoupon extends Omit<Coupon, 'coupon_code'> {
  coupon_code?: string | null;
  coupon_issue_code?: string | null;
  shop_order_code?: string | null;
  use_date?: string | number | null;
}

/** One value of a `default` or `color` option. @example { code: 'C01', name: '블랙' } */
export interface OptionValue {
  code: string;
  name?: string | null;
  [field: string]: unknown;
}

/**
 * A product option. `value_list` is always an array (empty for `input` options), whatever shape arrived.
 * @example
 * const o: ProductOption = { product_no: 13805, no: 12, code: 'SIZE', type: 'default', name: '사이즈',
 *   is_require: true, value_list: [{ code: 'S', name: 'S' }] };
 */
export interface ProductOption {
  product_no: number;
  no: number;
  code?: string | null;
  type?: 'default' | 'input' | 'color' | (string & {}) | null;
  name?: string | null;
  value_list: OptionValue[];
  is_require?: boolean | null;
  [field: string]: unknown;
}

/**
 * Every `LookupError.code` the till engine produces; docs/errors.md says what each means and what to do. A `switch`
 * over it is checked by the compiler: a misspelt or retired code in a `case` is an error.
 * @example switch (error.code) { case 'rate_limited': return 'Busy, retrying';
 * case 'network_error': return 'Offline'; }
 */
export type LookupErrorCode =
  // the network and the shop API's answers
  | 'network_error'
  | 'timeout'
  | 'rate_limited'
  | 'server_error'
  | 'maintenance'
  | 'bad_response'
  | 'bad_credentials'
  | 'token_invalid'
  | 'permission_denied'
  | 'forbidden'
  | 'plan_permission'
  | 'not_found'
  | 'unsupported'
  | 'api_error'
  | 'bad_request'
  // the host's options and calls
  | 'bad_options'
  | 'closed'
  | 'worker_failed'
  | 'not_started'
  | 'already_started'
  | 'cancelled'
  // the data and its listing
  | 'invalid_record'
  | 'deletions_skipped'
  | 'inconsistent_listing'
  | 'empty_listing_unconfirmed'
  | 'must_refetch'
  | 'relay_not_ready'
  | 'shop_mismatch'
  | 'journal_not_empty'
  // the shop's relay about this till's uses of issued coupons
  | 'uses_full'
  | 'till_uses_full'
  | 'release_refused'
  // the device's storage
  | 'quota_exceeded'
  | 'storage_unavailable'
  | 'storage_upgraded'
  | 'storage_closed'
  | 'storage_evicted'
  | 'storage_error'
  | 'internal_error';

/**
 * The codes a till never sees as a `LookupError`: thrown by the server half (the relay, its store, its fair share).
 * @example if ((e as ShopLookupError).code === 'redis_unreachable') exitWith(e.message);
 */
export type ServerErrorCode =
  | 'bad_cursor'
  | 'lease_lost'
  | 'redis_unavailable'
  | 'redis_unreachable'
  | 'too_many_requests'
  | 'too_many_products'
  | 'uses_full'
  | 'till_uses_full';

/**
 * An error as plain data: it survives the worker boundary (structured clone drops classes), so match on `code`.
 * @example if (result.error?.code === 'rate_limited') showBanner(result.error.message);
 */
export interface LookupError {
  /** Stable machine-readable code, e.g. `network_error`, `rate_limited`, `not_found`, `invalid_record`. */
  code: LookupErrorCode;
  /** What happened, in words a person can act on. */
  message: string;
  /** HTTP status, when an answer arrived. */
  status?: number;
  /** The API's own (negative) body code, e.g. -7. */
  apiCode?: number;
  /** For `invalid_record`: what was wrong, as `{ path, message }` issues. */
  issues?: RecordIssue[];
}

/**
 * One validation problem of a record: where and why.
 * @example { path: 'data.list[3].apply_sale_price', message: 'expected an integer, got "abc"' }
 */
export interface RecordIssue {
  path: string;
  message: string;
}

/**
 * Per-class request rate limits, in requests per second.
 * @example createShopLookup({ baseUrl, rateLimits: { list: 1, other: 5 } })
 */
export interface RateLimits {
  /** List calls (coupon listing, product option listing). Default 1. */
  list?: number;
  /** All other calls, including auth. Default 5. */
  other?: number;
}

/**
 * Credentials: shop admin key/secret (server side only!), or a token the host already has.
 * @example const auth: ShopAuth = { key: process.env.SHOP_API_KEY!, secret: process.env.SHOP_API_SECRET! };
 */
export type ShopAuth = { key: string; secret: string } | { accessToken: string };
