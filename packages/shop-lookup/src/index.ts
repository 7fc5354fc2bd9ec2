// shop-lookup: coupon and product-option lookups that keep working when the network does not.
export { createShopLookup } from './createShopLookup';
export { ShopLookupError } from './errors';

export type { ShopLookup } from './shopLookup';
export type {
  ClearOptions,
  Coupon,
  CouponOrder,
  CouponOverride,
  CouponPolicy,
  CouponRejection,
  CouponRelease,
  CouponVerdict,
  EarlierUse,
  EngineEndpoint,
  IssuedCoupon,
  JournalEntry,
  JournalPage,
  LookupError,
  LookupErrorCode,
  LookupResult,
  OptionValue,
  OtherTillUse,
  ProductOption,
  RateLimits,
  RecordIssue,
  ReleaseOrder,
  ServerErrorCode,
  ShopAuth,
  ShopLookupOptions,
  StorageProblem,
  SyncReport,
  SyncStatus,
  UseClaim,
  UseConflict,
  UseConflictEntry,
  VerdictDetail,
  VerdictWarning,
} from './types';
export type {
  InspectedResource,
  InspectOptions,
  JournalExport,
  JournalRow,
  LookupInspection,
  RefreshReport,
  RefreshTarget,
} from './toolTypes';
