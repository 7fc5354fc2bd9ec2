// Discount rule: how much the coupon takes off this order. The spec does not say which of apply_sale_price and
// apply_sale_percent is filled for which coupon ("not shown"); the mock and public fixtures fill one and send 0
// in the other, so the one that is > 0 decides. Amounts are whole currency units, rounded down.
import type { Coupon, IssuedCoupon } from '../../src/protocol';
import { formatAmount, quote, reject, type CheckedOrder, type RuleOutcome } from './ruleOutcome';

export type DiscountOutcome = { pass: true; discount: number; message: string } | Extract<RuleOutcome, { pass: false }>;

/** `type` values that name the discount kind. The API's own values seen so far ("down", "create") name how a coupon
 * is handed out instead, so they decide nothing. */
const PERCENT_TYPES = new Set(['percent', 'percentage', 'rate']);
const FIXED_TYPES = new Set(['price', 'fixed', 'amount']);

type Field = 'apply_sale_percent' | 'apply_sale_price' | 'apply_sale_type_max_price';

/** A non-negative number, 0 for missing/null; null when the value is unusable. */
function amountField(record: Coupon | IssuedCoupon, field: Field): number | null {
  const v = record[field];
  if (v === undefined || v === null) return 0;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

/**
 * A finite number ≥ 0 as the decimal it is written as (its shortest round-trip text, as JSON carries it):
 * digits and a power of ten. 33.3 is 333 / 10, not the binary 33.29999999999999715782905696.
 */
function decimalOf(n: number): { digits: bigint; scale: number } {
  const [mantissa = '0', exp = '0'] = String(n).toLowerCase().split('e');
  const [whole = '0', fraction = ''] = mantissa.split('.');
  const scale = fraction.length - Number(exp);
  const digits = BigInt(whole + fraction);
  return scale >= 0 ? { digits, scale } : { digits: digits * 10n ** BigInt(-scale), scale: 0 };
}

/** floor(amount × percent / 100) in exact integer arithmetic, for decimal percents (33.3) and amounts too: the
 * decimals as written are scaled to whole numbers, multiplied as BigInts, and divided once, rounding down.
 * @example percentOf(3000, 33.3) // 999 (floating point gives 998) */
function percentOf(amount: number, percent: number): number {
  const a = decimalOf(amount);
  const p = decimalOf(percent);
  return Number((a.digits * p.digits) / (100n * 10n ** BigInt(a.scale + p.scale)));
}

function kindOf(record: Coupon | IssuedCoupon, percent: number, price: number): 'percent' | 'fixed' | null {
  if (percent > 0 && price === 0) return 'percent';
  if (price > 0 && percent === 0) return 'fixed';
  const type = typeof record.type === 'string' ? record.type.trim().toLowerCase() : '';
  if (PERCENT_TYPES.has(type)) return 'percent';
  if (FIXED_TYPES.has(type)) return 'fixed';
  return null;
}

/**
 * Percent of the amount, or the fixed amount; either capped by `apply_sale_type_max_price` when it is > 0 (the
 * API's "maximum discount amount"). Never more than the order amount. Both or neither filled: `type` decides when it
 * names the kind, else `unreadable`. A negative or non-numeric amount field, or a percent over 100, is `unreadable`.
 * @example discountRule({ coupon_code: 'W', apply_sale_percent: 10, apply_sale_type_max_price: 5000 }, { amount:
 * 32000 }) // 3,200
 */
export function discountRule(record: Coupon | IssuedCoupon, order: Pick<CheckedOrder, 'amount'>): DiscountOutcome {
  const fields: Field[] = ['apply_sale_percent', 'apply_sale_price', 'apply_sale_type_max_price'];
  for (const field of fields) {
    if (amountField(record, field) === null) {
      return reject(
        'discount',
        'unreadable',
        `The discount field ${field} (${quote(record[field])}) could not be read.`,
        {
          field,
          value: record[field],
        },
      ) as DiscountOutcome;
    }
  }
  const percent = amountField(record, 'apply_sale_percent')!;
  const price = amountField(record, 'apply_sale_price')!;
  const cap = amountField(record, 'apply_sale_type_max_price')!;
  const kind = kindOf(record, percent, price);
  if (kind === null) {
    const what =
      percent > 0 ? `both ${percent}% and ${formatAmount(price)} are set` : 'neither a percent nor an amount is set';
    return reject(
      'discount',
      'unreadable',
      `The discount of this coupon is unclear: ${what} (type ${quote(record.type ?? 'missing')}).`,
      {
        field: 'type',
        value: record.type,
      },
    ) as DiscountOutcome;
  }
  const whole = Math.floor(order.amount);
  // the API names the cap "maximum discount amount" for every coupon: a fixed amount over it is capped too
  const capped = (n: number) => (cap > 0 ? Math.min(n, Math.floor(cap)) : n);
  if (kind === 'fixed') {
    const offered = Math.floor(price);
    const atCap = capped(offered);
    const discount = Math.min(atCap, whole);
    const limited =
      discount < atCap
        ? `, limited to the order amount ${formatAmount(whole)}`
        : atCap < offered
          ? `, capped at ${formatAmount(atCap)}`
          : '';
    return { pass: true, discount, message: `${formatAmount(offered)} off${limited}.` };
  }
  if (percent > 100) {
    return reject('discount', 'unreadable', `The discount of this coupon (${percent}%) is over 100%.`, {
      field: 'apply_sale_percent',
      value: record.apply_sale_percent,
    }) as DiscountOutcome;
  }
  const raw = Math.min(percentOf(order.amount, percent), whole);
  const discount = capped(raw);
  const note = discount < raw ? `, capped at ${formatAmount(discount)}` : '';
  return {
    pass: true,
    discount,
    message: `${percent}% of ${formatAmount(order.amount)} is ${formatAmount(raw)} off${note}.`,
  };
}
