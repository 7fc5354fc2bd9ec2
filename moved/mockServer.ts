// shop-lookup/mock-server, deprecated: the mock shop API moved to @shop-lookup/mock-server (install it beside
// shop-lookup).
import { loadMoved } from './loadMoved';

const mock = await loadMoved(
  'shop-lookup/mock-server',
  '@shop-lookup/mock-server',
  () => import('@shop-lookup/mock-server'),
);

export const startMockShopApi = mock.startMockShopApi;
export const createMockShopApiHandler = mock.createMockShopApiHandler;
export const createMockData = mock.createMockData;
export const MOCK_CODES = mock.MOCK_CODES;
export type * from '@shop-lookup/mock-server';
