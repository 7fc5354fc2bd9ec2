// What the checkout loads as one chunk of its own, beside the database (loadCouponValidator.ts): the rules and the
// journal, and the clock offset kept beside the data, which its periods and data ages need after a restart.
export { createCouponValidator } from '../coupon/validateCoupon';
export { keepClockOffset } from './keepClockOffset';
