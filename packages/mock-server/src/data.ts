// The default data set: deterministic from a seed, with fixed special records at known positions.
import type { MockData, MockDataOptions, WireRecord } from './types';
import { createRng } from './prng';
import { generateCoupon, SPECIAL_COUPONS } from './couponData';
import { generateIssuedCoupon, SPECIAL_ISSUED_COUPONS } from './issuedCouponData';
import { AMBIGUOUS_PRODUCT_NO, FIRST_PRODUCT_NO, generateProducts } from './productData';

/**
 * Codes of the fixed records every generated data set holds (when its counts are large enough).
 * Coupons 0–4 of the list are, in order: welcome, fixed, encoded, expired, appOnly.
 * Issued coupons 0–2 are: issuedUnused (of WELCOME10), issuedUsed (of FIXED3000), issuedEncoded (of encodedCoupon).
 * @example await fetch(`${api.url}/v2/shop/coupons/${encodeURIComponent(MOCK_CODES.encodedCoupon)}`, { headers })
 */
export const MOCK_CODES = {
  /** progress, 10 %, max discount 5000, minimum order 10000, no period limit (use_period ''). */
  welcomeCoupon: 'WELCOME10',
  /** progress, fixed 3000, minimum order 20000. */
  fixedCoupon: 'FIXED3000',
  /** A code with Korean, a space, '/', '%', '?', '#' and '&': it only reaches the server percent-encoded. */
  encodedCoupon: '봄 세일/10%?#&',
  /** Period wholly in 2025, status still 'progress'. */
  expiredCoupon: 'EXPIRED2025',
  /** use_app true; period as unix seconds. */
  appOnlyCoupon: 'APPONLY',
  /** Issued, unused: status 'progress', shop_order_code '' and use_date ''. */
  issuedUnused: 'IC-0000-OPEN',
  /** Issued, used: status 'complete', with shop_order_code and use_date. */
  issuedUsed: 'IC-0000-USED',
  /** An issue code that needs percent-encoding. */
  issuedEncoded: 'IC/봄 세일?#%&1',
  /** The first product number (products are consecutive from here). */
  firstProductNo: FIRST_PRODUCT_NO,
  /** The product whose option codes look like option numbers. */
  ambiguousProductNo: AMBIGUOUS_PRODUCT_NO,
  /** On the ambiguous product: option no 12 has code 'SIZE'… */
  optionNo12: 12,
  optionNo12Code: 'SIZE',
  /** …and option no 3 has code '12': asking for segment '12' answers option no 12, never this one. */
  optionCode12: '12',
  optionCode12No: 3,
} as const;

const DEFAULTS = { seed: 1, coupons: 240, issuedCoupons: 300, products: 24 } as const;

function count(value: number | undefined, fallback: number, name: string): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`createMockData: ${name} must be an integer >= 0`);
  return n;
}

/**
 * Generates a data set; the same options always give the same data. 100,000 coupons take well under a second.
 * @example const data = createMockData({ seed: 2, coupons: 100_000 });
 */
export function createMockData(options: MockDataOptions = {}): MockData {
  const seed = options.seed ?? DEFAULTS.seed;
  const couponCount = count(options.coupons, DEFAULTS.coupons, 'coupons');
  const issuedCount = count(options.issuedCoupons, DEFAULTS.issuedCoupons, 'issuedCoupons');
  const productCount = count(options.products, DEFAULTS.products, 'products');
  // One stream per kind, so asking for more coupons does not change the issued coupons or products.
  const couponRng = createRng(seed);
  const issuedRng = createRng(seed ^ 0x9e3779b9);
  const productRng = createRng(seed ^ 0x85ebca6b);

  const coupons: WireRecord[] = new Array(couponCount);
  for (let i = 0; i < couponCount; i++) {
    const special = SPECIAL_COUPONS[i];
    coupons[i] = special ? structuredClone(special) : generateCoupon(couponRng, i);
  }

  const parents = coupons.length > 0 ? coupons : SPECIAL_COUPONS;
  const issuedCoupons: WireRecord[] = new Array(issuedCount);
  for (let i = 0; i < issuedCount; i++) {
    const special = SPECIAL_ISSUED_COUPONS[i];
    issuedCoupons[i] = special
      ? structuredClone(special)
      : generateIssuedCoupon(issuedRng, i, parents[issuedRng.int(0, parents.length - 1)] as WireRecord);
  }

  return { coupons, issuedCoupons, products: generateProducts(productRng, productCount) };
}

/** True for a ready data set, false for generator options. */
export function isMockData(value: MockData | MockDataOptions): value is MockData {
  return Array.isArray((value as MockData).coupons) && (value as MockData).products instanceof Map;
}
