// The error a store throws when tracking more products would grow the shop's set past its cap (maxTrackedProducts).
import { ShopLookupError } from '@shop-lookup/shop-api';

/**
 * The error of a tracked set that would grow past its cap.
 * @example throw tooManyProducts(100, 100);
 */
export function tooManyProducts(max: number, tracked: number): ShopLookupError {
  return new ShopLookupError(
    'too_many_products',
    `TOO MANY PRODUCTS: this shop's relay tracks ${tracked} products and lists at most ${max} (maxTrackedProducts); ` +
      'products no till asked for within productTtlMs are dropped, or raise the limit on the relay.',
    { status: 409 },
  );
}
