// shop-lookup/mock-server/msw: the mock shop API as MSW request handlers (`msw` is an optional peer dependency).
export { createMockShopApiMsw } from './createMockShopApiMsw';
export type { MockShopApiMsw, MockShopApiMswOptions } from './createMockShopApiMsw';
