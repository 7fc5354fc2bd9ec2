// A real HTTP server on 127.0.0.1 around the mock handler, closable so that clients then get connection refused.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMockShopApiHandler } from './createMockShopApiHandler';
import type { MockData, MockShopApi, MockShopApiOptions } from './types';

/**
 * Starts the mock shop API (port 0 = an ephemeral port) and resolves once it listens.
 * @example const api = await startMockShopApi({ rateLimits: false }); afterAll(() => api.close());
 */
export async function startMockShopApi(options: MockShopApiOptions = {}): Promise<MockShopApi> {
  const { port = 0, host = '127.0.0.1', ...handlerOptions } = options;
  const mock = createMockShopApiHandler(handlerOptions);
  const server = createServer((req, res) => mock.handler(req, res));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' || host.includes(':') ? `[${address.address}]` : host;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    get data(): MockData {
      return mock.data;
    },
    set data(data: MockData) {
      mock.data = data;
    },
    get requests() {
      return mock.requests;
    },
    upsertCoupon: mock.upsertCoupon,
    removeCoupon: mock.removeCoupon,
    upsertIssuedCoupon: mock.upsertIssuedCoupon,
    setProductOptions: mock.setProductOptions,
    expireTokens: mock.expireTokens,
    setDown: mock.setDown,
    inject: mock.inject,
    clearFaults: mock.clearFaults,
    hold: mock.hold,
    resetRequests: mock.resetRequests,
    handler: mock.handler,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        // Two more turns of the event loop let an in-process client (tests) read the EOF and then close its
        // socket, so its next request opens a new connection and gets ECONNREFUSED, not a reset kept-alive one.
        const settle = (): void => void setImmediate(() => setImmediate(resolve));
        server.close((error) => (error ? reject(error) : settle()));
        // server.close() alone waits for idle keep-alive sockets, which undici keeps: end them all now.
        mock.releaseHanging();
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
