// How many bytes one upstream answer may have, by what was asked, counted as decoded (a gzip or br answer is counted
// as it inflates): past it the answer is dropped unread, so one shop's API cannot take a process's memory.
import type { RequestClass } from './rateLimiterTypes';

/** The most bytes one answer may have, decoded. */
export interface AnswerBounds {
  /** A list page (coupons, a product's options): at most 100 rows. */
  list: number;
  /** A single coupon, issued coupon or product option. */
  item: number;
  /** The /v2/auth answer (a token). */
  auth: number;
}

/**
 * The bound of a data request of `cls` ('list' pages, every other read an item).
 * @example answerBound(ANSWER_BOUNDS, 'list') // 8388608
 */
export function answerBound(bounds: AnswerBounds, cls: RequestClass): number {
  return cls === 'list' ? bounds.list : bounds.item;
}

/**
 * A bound in words: whole MiB or KiB when it is one, else bytes.
 * @example bytesText(8 * 1024 * 1024) // '8 MiB'
 */
export function bytesText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
