// How the till shows money, coupon terms, times and reasons.
import type { Coupon, CouponRejection, IssuedCoupon } from 'shop-lookup';

const number = new Intl.NumberFormat('ko-KR');

/** @example won(32000) // '₩32,000' */
export function won(amount: number): string {
  return `₩${number.format(amount)}`;
}

/** @example ago(Date.now() - 180_000) // '3 min ago' */
export function ago(at: number | null, now = Date.now()): string {
  if (at === null) return 'never';
  const s = Math.round((now - at) / 1000);
  if (s < 45) return 'just now';
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min ago`;
  const hours = Math.round(min / 60);
  if (hours < 36) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/** @example duration(180_000) // '3 min' */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const hours = Math.round(min / 60);
  return hours < 36 ? `${hours} h` : `${Math.round(hours / 24)} days`;
}

/** Absolute local time, for tooltips and the journal. @example clockTime(ms) // '2026. 11. 22. 오후 8:41:05' */
export function clockTime(at: number): string {
  return new Date(at).toLocaleString('ko-KR');
}

/** A numeric field of a record as received (records keep whatever the API sent); 0 when it is not a number. */
function amountOf(record: Coupon | IssuedCoupon, field: string): number {
  const value = (record as Record<string, unknown>)[field];
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** A text field of a record, or '' when it is missing or not text. */
export function textField(record: Coupon | IssuedCoupon, field: string): string {
  const value = (record as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** @example discountText(coupon) // '10% (max ₩5,000)' or '₩3,000' */
export function discountText(c: Coupon | IssuedCoupon): string {
  const percent = amountOf(c, 'apply_sale_percent');
  if (percent > 0) {
    const max = amountOf(c, 'apply_sale_type_max_price');
    return max > 0 ? `${percent}% (max ${won(max)})` : `${percent}%`;
  }
  return won(amountOf(c, 'apply_sale_price'));
}

/** @example minimumText(coupon) // 'from ₩20,000' */
export function minimumText(c: Coupon | IssuedCoupon): string {
  const min = amountOf(c, 'apply_sale_type_minimum_price');
  return min > 0 ? `from ${won(min)}` : 'any amount';
}

const STATUS: Record<string, string> = {
  progress: 'active',
  stop: 'stopped',
  end: 'ended',
  ready: 'not started',
  complete: 'used',
};

/** The API's undocumented status strings, in words where we know them (the raw value otherwise). */
export function statusText(status: string | null | undefined): string {
  if (!status) return 'no status';
  return STATUS[status.toLowerCase()] ?? status;
}

const REASONS: Record<CouponRejection, string> = {
  not_found: 'No such coupon',
  unknown_offline: 'Unknown code (offline)',
  unchecked: 'Could not be checked',
  inactive: 'Coupon not active',
  not_started: 'Not valid yet',
  expired: 'Expired',
  below_minimum: 'Order below minimum',
  app_only: 'App orders only',
  not_combinable: 'Cannot combine with another discount',
  stale: 'Local data too old',
  unreadable: 'Coupon data unreadable',
  used_on_this_till: 'Already used on this till',
  used_on_another_till: 'Already used on another till',
};

/** A short headline for a rejection; the verdict's `detail.message` says the rest. */
export function reasonText(reason: CouponRejection | string): string {
  return REASONS[reason as CouponRejection] ?? reason;
}

/** `use_period` as received, or a word when it is empty. */
export function periodText(period: unknown): string {
  if (period === null || period === undefined || period === '') return 'no time limit';
  return String(period);
}
