// Generated issued coupons: the parent coupon's fields plus the issue fields, unused ("progress") or used ("complete").
import type { WireRecord } from './types';
import { formatDash, kst, randomKst, type Rng } from './prng';
import { SPECIAL_COUPONS } from './couponData';

function parentOf(code: string): WireRecord {
  const parent = SPECIAL_COUPONS.find((coupon) => coupon.coupon_code === code);
  if (!parent) throw new Error(`no special coupon ${code}`);
  return parent;
}

/** The fixed issued coupons that open every generated list, in this order. */
export const SPECIAL_ISSUED_COUPONS: readonly WireRecord[] = [
  {
    coupon_issue_code: 'IC-0000-OPEN',
    ...parentOf('WELCOME10'),
    status: 'progress',
    shop_order_code: '',
    use_date: '',
    member_code: 'm20260105a1b2c3',
  },
  {
    coupon_issue_code: 'IC-0000-USED',
    ...parentOf('FIXED3000'),
    status: 'complete',
    shop_order_code: '202609150001234',
    use_date: '2026-09-15 14:22:05',
    member_code: 'm20251230d4e5f6',
  },
  {
    coupon_issue_code: 'IC/봄 세일?#%&1',
    ...parentOf('봄 세일/10%?#&'),
    status: 'progress',
    shop_order_code: '',
    use_date: '',
    member_code: 'm20260301a7b8c9',
  },
];

/**
 * One generated issued coupon of `parent`. `index` makes the issue code unique.
 * @example generateIssuedCoupon(createRng(2), 7, coupons[0]).coupon_issue_code // 'IC-…-0007'
 */
export function generateIssuedCoupon(rng: Rng, index: number, parent: WireRecord): WireRecord {
  const used = rng.chance(0.35);
  const issuedAt = randomKst(rng, kst(2025, 1, 1), kst(2026, 10, 31));
  const usedAt = used ? randomKst(rng, issuedAt, kst(2026, 11, 15)) : 0;
  const day = formatDash(issuedAt).slice(0, 10).replaceAll('-', '');
  return {
    coupon_issue_code: `IC-${rng.chars(4)}-${index.toString(36).toUpperCase().padStart(4, '0')}`,
    ...parent,
    status: used ? 'complete' : 'progress',
    shop_order_code: used ? `${formatDash(usedAt).slice(0, 10).replaceAll('-', '')}${rng.chars(7, '0123456789')}` : '',
    use_date: used ? formatDash(usedAt) : '',
    member_code: `m${day}${rng.chars(6, '0123456789abcdef')}`,
  };
}
