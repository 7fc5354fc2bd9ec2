// Schemas of the three record kinds, checked once, here in the worker, where records arrive from the network.
// Loose objects: every field that arrives is kept, also the ones the spec does not list.
import * as z from 'zod/mini';
import { boolean, code, integer, key, opaqueDate, text, valueList } from './fieldReaders';

const couponFields = {
  status: z.optional(text),
  apply_sale_price: z.optional(integer),
  apply_sale_percent: z.optional(integer),
  apply_sale_type_max_price: z.optional(integer),
  apply_sale_type_minimum_price: z.optional(integer),
  name: z.optional(text),
  type: z.optional(text),
  type_coupon_create_count: z.optional(integer),
  type_coupon_use_count: z.optional(integer),
  use_period: z.optional(opaqueDate),
  create_date: z.optional(opaqueDate),
  edit_date: z.optional(opaqueDate),
  is_duplication: z.optional(boolean),
  use_app: z.optional(boolean),
};

export const couponSchema = z.looseObject({ coupon_code: code, ...couponFields });

// The issued-coupon answer carries the coupon fields (maybe without coupon_code) plus issue fields.
export const issuedCouponSchema = z.looseObject({
  ...couponFields,
  coupon_code: z.optional(text),
  coupon_issue_code: z.optional(text),
  shop_order_code: z.optional(text),
  use_date: z.optional(opaqueDate),
});

export const productOptionSchema = z.looseObject({
  no: key,
  code: z.optional(text),
  type: z.optional(text),
  name: z.optional(text),
  value_list: valueList,
  is_require: z.optional(boolean),
});

export type RecordKind = 'coupon' | 'issuedCoupon' | 'productOption';

export const schemas = {
  coupon: couponSchema,
  issuedCoupon: issuedCouponSchema,
  productOption: productOptionSchema,
} as const;
