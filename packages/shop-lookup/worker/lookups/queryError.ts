// A lookup's arguments, checked before anything is read or asked: what is wrong, in words, or null.
import type { LookupError, LookupQuery } from '../../src/protocol';
import { codeProblem } from '@shop-lookup/shop-api';

/**
 * @example queryError({ kind: 'coupon', code: '..' }) // { code: 'bad_request', message: 'A code cannot be "." or
 * ".." …' }
 */
export function queryError(q: LookupQuery): LookupError | null {
  const bad = (what: string, v: unknown): LookupError => ({ code: 'bad_request', message: `${what} must be ${v}.` });
  if ((q.kind === 'coupon' || q.kind === 'issuedCoupon') && (typeof q.code !== 'string' || q.code === '')) {
    return bad('A coupon code', 'a non-empty string');
  }
  if ((q.kind === 'coupon' || q.kind === 'issuedCoupon') && codeProblem(q.code) !== null) {
    return { code: 'bad_request', message: codeProblem(q.code)! };
  }
  if ('productNo' in q && !Number.isSafeInteger(q.productNo)) return bad('A product number', 'a whole number');
  if (q.kind === 'productOptionByNo' && !Number.isSafeInteger(q.optionNo))
    return bad('An option number', 'a whole number');
  if (q.kind === 'productOptionByCode' && (typeof q.optionCode !== 'string' || q.optionCode === '')) {
    return bad('An option code', 'a non-empty string');
  }
  if (q.kind === 'productOptionByCode' && codeProblem(q.optionCode) !== null) {
    return { code: 'bad_request', message: codeProblem(q.optionCode)! };
  }
  return null;
}
