// Right calls against every entry point: they must compile, and the types must be the real ones, not `any`.
import {
  createShopLookup,
  ShopLookupError,
  type Coupon,
  type CouponVerdict,
  type LookupResult,
  type ProductOption,
  type ShopLookup,
  type ShopLookupOptions,
  type SyncReport,
  type SyncStatus,
} from 'shop-lookup';
import { createMockShopApiHandler, MOCK_CODES, startMockShopApi, type MockShopApi } from '@shop-lookup/mock-server';
import { createMockShopApiMsw, type MockShopApiMsw } from '@shop-lookup/mock-server/msw';
import { useLookup, useSyncStatus, type LookupState } from 'shop-lookup/react';
import {
  createShopApiProxy,
  createShopRelay,
  type Authorize,
  type RelayStatus,
  type ShopApiProxy,
  type ShopRelay,
} from '@shop-lookup/relay';
import type {} from 'shop-lookup/worker';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<_T extends true>(): void {}

const options: ShopLookupOptions = {
  baseUrl: '/shop-api',
  products: [13805],
  refreshIntervalMs: 60_000,
  dbName: 'shop-lookup:my-shop',
  worker: () => new Worker(new URL('shop-lookup/worker', import.meta.url), { type: 'module' }),
};
const lookup: ShopLookup = createShopLookup(options);

lookup.coupon('WELCOME10').subscribe((r) => {
  assertType<Equal<typeof r, LookupResult<Coupon | null>>>();
  const name: string | null | undefined = r.data?.name;
  const when: number | null = r.syncedAt;
  void [name, when, r.offline, r.fetching, r.error?.code];
});
lookup.productOptionByCode(13805, '12').subscribe(({ data }) => {
  assertType<Equal<typeof data, ProductOption | null>>();
  if (data) data.value_list.map((v) => v.code);
});
lookup.status().subscribe((s: SyncStatus) => void s.phase);

export async function checkout(code: string): Promise<number> {
  const report: SyncReport = await lookup.sync();
  void report.errors.map((e) => e.code);
  const v: CouponVerdict = await lookup.validateCoupon(code, { amount: 32_000, app: false, at: new Date() });
  if (v.ok) return v.discount;
  const reason:
    | 'not_found'
    | 'unknown_offline'
    | 'inactive'
    | 'not_started'
    | 'expired'
    | 'below_minimum'
    | 'app_only'
    | 'not_combinable'
    | 'stale'
    | 'unreadable'
    | 'unchecked'
    | 'used_on_this_till'
    | 'used_on_another_till' = v.reason;
  throw new ShopLookupError('bad_request', `${reason}: ${v.detail.message}`);
}

export async function nodeSide(): Promise<void> {
  const mock: MockShopApi = await startMockShopApi({ rateLimits: false });
  const proxy: ShopApiProxy = createShopApiProxy({
    key: 'demo-key',
    secret: 'demo-secret',
    target: mock.url,
    basePath: '/shop-api',
    public: true,
  });
  proxy.setUpstreamDown(false);
  const storefront: Authorize = (_req, route) => ['productOptions', 'productOption', 'coupon'].includes(route);
  const relay: ShopRelay = createShopRelay({
    key: 'demo-key',
    secret: 'demo-secret',
    target: mock.url,
    basePath: '/shop-api',
    authorize: storefront,
  });
  const status: RelayStatus = await relay.status();
  assertType<Equal<typeof status.store, 'memory' | 'redis'>>();
  await relay.close();
  createMockShopApiHandler({ requireAuth: false }).upsertCoupon({ coupon_code: MOCK_CODES.welcomeCoupon });
  proxy.close();
  await mock.close();
}

export function useCouponName(code: string): string | null | undefined {
  const state: LookupState<Coupon | null> = useLookup(() => (code ? lookup.coupon(code) : null), [code]);
  assertType<Equal<typeof state.data, Coupon | null | undefined>>();
  const status: SyncStatus | null = useSyncStatus(lookup);
  void status?.phase;
  if (state.pending) return undefined;
  assertType<Equal<typeof state.data, Coupon | null>>();
  return state.data?.name;
}

export function mswSide(): number {
  const mock: MockShopApiMsw = createMockShopApiMsw({ baseUrl: 'http://localhost/shop-api', rateLimits: false });
  mock.upsertCoupon({ coupon_code: MOCK_CODES.welcomeCoupon });
  mock.setDown(false);
  return mock.handlers.length;
}
