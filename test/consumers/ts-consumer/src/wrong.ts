// Wrong calls: each line under a @ts-expect-error must be a type error (an unused directive fails the compile,
// so if the published types were missing or `any`, this file would not compile). The test also compiles this
// file with the directives removed and counts one error per directive.
import { type CouponRejection, createShopLookup, type LookupError } from 'shop-lookup';
import { startMockShopApi } from '@shop-lookup/mock-server';
import { createMockShopApiMsw } from '@shop-lookup/mock-server/msw';
import { useLookup } from 'shop-lookup/react';
import { createShopApiProxy, createShopRelay } from '@shop-lookup/relay';

const lookup = createShopLookup({ baseUrl: '/shop-api' });

// @ts-expect-error baseUrl is required
createShopLookup({ products: [13805] });
// @ts-expect-error product numbers are numbers
createShopLookup({ baseUrl: '/shop-api', products: ['13805'] });
// @ts-expect-error auth is { key, secret } or { accessToken }
createShopLookup({ baseUrl: '/shop-api', auth: { key: 'k' } });
// @ts-expect-error there is no such option
createShopLookup({ baseUrl: '/shop-api', refreshInterval: 60_000 });
// @ts-expect-error productOptions takes a product number
lookup.productOptions('13805');
// @ts-expect-error productOptionByNo takes an option number
lookup.productOptionByNo(13805, 'SIZE');
// @ts-expect-error an order needs an amount
void lookup.validateCoupon('WELCOME10', { app: true });
// @ts-expect-error a single lookup's data may be null
lookup.coupon('WELCOME10').subscribe((r) => r.data.coupon_code);
// @ts-expect-error a verdict has a discount only when ok
void lookup.validateCoupon('WELCOME10', { amount: 1 }).then((v) => v.discount);
// @ts-expect-error the proxy needs the key and the secret
createShopApiProxy({ basePath: '/shop-api' });
// @ts-expect-error the relay needs the key and the secret
createShopRelay({ basePath: '/shop-api', public: true });
// @ts-expect-error authorize gets a route name, not a path
createShopRelay({ key: 'k', secret: 's', authorize: (_req, route) => route === '/v2/shop/coupons' });
// @ts-expect-error the mock's port is a number
void startMockShopApi({ port: '8787' });
// @ts-expect-error useLookup takes a function that returns the lookup (and its deps), not the lookup itself
useLookup(lookup.coupon('WELCOME10'), []);
// @ts-expect-error useLookup needs its deps, like useMemo
useLookup(() => lookup.coupon('WELCOME10'));
// @ts-expect-error the MSW handlers' baseUrl is a string
createMockShopApiMsw({ baseUrl: new URL('https://api.imweb.me') });
// @ts-expect-error a code that is not a LookupErrorCode never matches: a misspelt code is an error
export const misspelt = (e: LookupError) => e.code === 'network_eror';
// @ts-expect-error a reason that is not a CouponRejection is an error
export const unknownReason: CouponRejection = 'used_elsewhere';
