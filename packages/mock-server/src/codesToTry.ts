// The codes worth typing at a till in front of the mock: its fixed coupons and issued coupons, read from a data set
// (a code missing from it is left out), each with what a till answers for it. The demo till lists them, the
// shop-lookup-mock command prints them.
import { MOCK_CODES } from './data';
import type { MockData } from './types';

/** One code to try, and what a till says to it. */
export interface CodeToTry {
  code: string;
  kind: 'coupon' | 'issued';
  /** The record's name in the data (Korean, as the shop wrote it). */
  name: string;
  /** What a till answers, in a few words. */
  expect: string;
}

/** The fixed records worth trying, in the order a newcomer should try them. */
const TRIES: readonly { code: string; kind: CodeToTry['kind']; expect: string }[] = [
  { code: MOCK_CODES.welcomeCoupon, kind: 'coupon', expect: '10 % off (at most ₩5,000) from ₩10,000' },
  { code: MOCK_CODES.fixedCoupon, kind: 'coupon', expect: '₩3,000 off from ₩20,000' },
  { code: MOCK_CODES.issuedUnused, kind: 'issued', expect: 'single use: accepted once, then refused at every till' },
  { code: MOCK_CODES.issuedUsed, kind: 'issued', expect: 'used already: refused' },
  { code: MOCK_CODES.expiredCoupon, kind: 'coupon', expect: 'expired at the end of 2025: refused' },
  { code: MOCK_CODES.appOnlyCoupon, kind: 'coupon', expect: 'app orders only: refused at a till' },
];

/**
 * @example mockCodesToTry(api.data)[0] // { code: 'WELCOME10', kind: 'coupon', name: '신규가입 10% 할인', expect: '10 % off …' }
 */
export function mockCodesToTry(data: MockData): CodeToTry[] {
  return TRIES.flatMap((t) => {
    const record =
      t.kind === 'coupon'
        ? data.coupons.find((c) => c.coupon_code === t.code)
        : data.issuedCoupons.find((c) => c.coupon_issue_code === t.code);
    return record ? [{ ...t, name: typeof record.name === 'string' ? record.name : t.code }] : [];
  });
}
