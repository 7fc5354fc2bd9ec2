// What loads as one chunk of its own, beside the database (loadCouponValidator.ts): the checkout's rules, the journal
// and its export, and the clock offset kept beside the data, which its periods and data ages need after a restart;
// with them the app tools, refresh(target) and inspect() (the devtools), and clear()'s emptying of the database, out
// of the worker's first load.
export { exportJournal } from '../coupon/exportJournal';
export { createCouponValidator } from '../coupon/validateCoupon';
export { emptyDatabase } from './emptyDatabase';
export { inspectEngine } from './inspectEngine';
export { keepClockOffset } from './keepClockOffset';
export { refreshOne } from './refreshOne';
