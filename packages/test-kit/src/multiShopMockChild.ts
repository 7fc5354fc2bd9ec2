// Many mock shops in one process, for the hub's scale test (started by childProcess.ts through tsx): shop
// `shop-007` is the mock API under `/shops/shop-007/v2/…` with its own key, secret, rate limits and data, every
// coupon name ending in `[shop-007]` and one coupon `ONLY-shop-007`, so a till can check each record's shop. It logs
// every /v2 request (shop, path, offset, the hub instance that sent it, when it arrived and ended) and holds a shop's
// list request on demand. argv[2]: { shops, coupons }. Steered over IPC: log, reset (the log and holds), hold,
// release, close.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMockShopApiHandler, type MockHold, type MockShopApiHandler } from '@shop-lookup/mock-server';

interface Entry {
  shop: string;
  path: string;
  offset: string | null;
  instance: string;
  at: number;
  end: number | null;
  status: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as { shops: number; coupons: number };
const ids = Array.from({ length: config.shops }, (_, i) => `shop-${String(i).padStart(3, '0')}`);
const shops = new Map<string, MockShopApiHandler>();
ids.forEach((id, i) => {
  const mock = createMockShopApiHandler({
    key: `key-${id}`,
    secret: `secret-${id}`,
    data: { seed: i + 1, coupons: config.coupons, issuedCoupons: 0, products: 2 },
  });
  for (const coupon of mock.data.coupons) if (typeof coupon.name === 'string') coupon.name = `${coupon.name} [${id}]`;
  mock.upsertCoupon({ ...mock.data.coupons[1], coupon_code: `ONLY-${id}`, name: `only [${id}]` });
  shops.set(id, mock);
});
const log: Entry[] = [];
const holds = new Map<string, MockHold>();

const server = createServer((req, res) => {
  const match = /^\/shops\/([^/]+)(\/.*)$/.exec(req.url ?? '');
  const mock = match ? shops.get(match[1]!) : undefined;
  if (!match || !mock) {
    res.writeHead(404).end();
    return;
  }
  const url = new URL(match[2]!, 'http://mock');
  const entry: Entry = {
    shop: match[1]!,
    path: url.pathname,
    offset: url.searchParams.get('offset'),
    instance: String(req.headers['x-hub-instance'] ?? '?'),
    at: Date.now(),
    end: null,
    status: 0,
  };
  log.push(entry);
  res.once('close', () => {
    entry.end = Date.now();
    entry.status = res.writableFinished ? res.statusCode : 0;
  });
  req.url = match[2]!;
  mock.handler(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ ready: { port: (server.address() as AddressInfo).port } }));

process.on('disconnect', () => process.exit(0));
process.on('message', (raw) => {
  const message = raw as { id: number; type: string; shop?: string };
  const reply = (result: unknown): void => void process.send?.({ id: message.id, result });
  if (message.type === 'log') reply(log);
  else if (message.type === 'reset') {
    log.splice(0);
    for (const hold of holds.values()) hold.release();
    holds.clear();
    reply(true);
  } else if (message.type === 'hold') {
    // answers once the shop's first list request arrived: with the instance that sent it
    const hold = shops.get(message.shop!)!.hold({ path: '/v2/shop/coupons' });
    holds.set(message.shop!, hold);
    void hold.arrived.then(() =>
      reply(log.filter((e) => e.shop === message.shop && e.path === '/v2/shop/coupons').at(-1)!.instance),
    );
  } else if (message.type === 'release') {
    holds.get(message.shop!)?.release();
    reply(true);
  } else if (message.type === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
