// The mock shop API as most tests want it: on 127.0.0.1 port 0 with its rate limits off, and the credentials the
// mock accepts.
import { startMockShopApi, type MockShopApi, type MockShopApiOptions } from '@shop-lookup/mock-server';

export const KEY = 'demo-key';
export const SECRET = 'demo-secret';

/** A mock API with rate limits off (tests that need them turn them on). */
export function startMock(options: MockShopApiOptions = {}): Promise<MockShopApi> {
  return startMockShopApi({ rateLimits: false, ...options });
}
