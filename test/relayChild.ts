// One relay instance in a process of its own, for the scale test (started by test/childProcess.ts through tsx).
// argv[2] is its config as JSON; it reports { ready: { port, instance } } over IPC once it listens, and answers
// { id, type } requests: 'status', 'refresh', 'close'.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShopRelay } from '../relay/createShopRelay';

export interface RelayChildConfig {
  target: string;
  redis: string;
  shopId: string;
  basePath: string;
  key: string;
  secret: string;
  /** 0 (default): a free port; the same port again when an instance is restarted. */
  port?: number;
  leaseMs?: number;
  refreshIntervalMs?: number;
}

export type RelayChildMessage = { type: 'status' } | { type: 'refresh' } | { type: 'close' };

const config = JSON.parse(process.argv[2] ?? '{}') as RelayChildConfig;
const relay = createShopRelay({
  key: config.key,
  secret: config.secret,
  target: config.target,
  basePath: config.basePath,
  redis: config.redis,
  shopId: config.shopId,
  public: true,
  // the scale test counts upstream calls: no retry may hide or add one, and no client bound may refuse an engine
  clientLimits: false,
  ...(config.leaseMs !== undefined ? { leaseMs: config.leaseMs } : {}),
  ...(config.refreshIntervalMs !== undefined ? { refreshIntervalMs: config.refreshIntervalMs } : {}),
});
const server = createServer((req, res) => relay(req, res));

async function answer(message: RelayChildMessage & { id: number }): Promise<unknown> {
  switch (message.type) {
    case 'status':
      return relay.status();
    case 'refresh':
      return relay.refresh();
    case 'close':
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      setImmediate(() => process.exit(0));
      return null;
  }
}

process.on('message', (raw) => {
  const message = raw as RelayChildMessage & { id: number };
  answer(message).then(
    (result) => process.send?.({ id: message.id, result: result ?? null }),
    (error: unknown) => process.send?.({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
// the parent went away (test run ended or crashed): do not outlive it
process.on('disconnect', () => process.exit(0));

await relay.ready;
server.listen(config.port ?? 0, '127.0.0.1', async () => {
  const { port } = server.address() as AddressInfo;
  const { instance } = await relay.status();
  process.send?.({ ready: { port, instance } });
});
