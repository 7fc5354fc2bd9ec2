// The mock shop API in a process of its own, for the scale test (started by childProcess.ts through tsx), so
// that the arrival times its rate limits count are not delayed by the test process's own work (twenty engines).
// argv[2] is its options as JSON; steered over HTTP (/__mock/...), like the demo steers it.
import { startMockShopApi } from '@shop-lookup/mock-server';
import type { MockShopApiOptions } from '@shop-lookup/mock-server';

const options = JSON.parse(process.argv[2] ?? '{}') as MockShopApiOptions;
const api = await startMockShopApi(options);
process.on('disconnect', () => void api.close().then(() => process.exit(0)));
process.on('message', (raw) => {
  const message = raw as { id: number; type: string };
  if (message.type === 'close') void api.close().then(() => process.exit(0));
});
process.send?.({ ready: { port: api.port } });
