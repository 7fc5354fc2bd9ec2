// shop-lookup/mock-server/msw, deprecated: moved to @shop-lookup/mock-server/msw (install @shop-lookup/mock-server).
import { loadMoved } from './loadMoved';

const msw = await loadMoved(
  'shop-lookup/mock-server/msw',
  '@shop-lookup/mock-server/msw',
  () => import('@shop-lookup/mock-server/msw'),
);

export const createMockShopApiMsw = msw.createMockShopApiMsw;
export type * from '@shop-lookup/mock-server/msw';
