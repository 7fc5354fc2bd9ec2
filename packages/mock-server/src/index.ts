// shop-lookup/mock-server: a local stand-in for the Imweb v2 shop API, speaking its wire format.
export { startMockShopApi } from './startMockShopApi';
export { createMockShopApiHandler } from './createMockShopApiHandler';
export { createMockData, MOCK_CODES } from './data';
export type {
  FaultWhen,
  HoldWhen,
  MockData,
  MockDataOptions,
  MockFault,
  MockHold,
  MockRequestHandler,
  MockRequestRecord,
  MockShopApi,
  MockShopApiHandler,
  MockShopApiHandlerOptions,
  MockShopApiOptions,
  WireRecord,
} from './types';
