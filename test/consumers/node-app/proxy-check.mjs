// The README's node:http recipe for the credential proxy, in front of the package's mock API, and what a browser
// (or anyone) may ask it. Prints one JSON line: the status and body code of each request, and what reached the API.
import { createServer } from 'node:http';
import { startMockShopApi } from '@shop-lookup/mock-server';
import { createShopApiProxy } from '@shop-lookup/relay';

const api = await startMockShopApi(); // accepts demo-key / demo-secret
const proxy = createShopApiProxy({
  key: process.env.SHOP_API_KEY ?? 'demo-key', // server side only
  secret: process.env.SHOP_API_SECRET ?? 'demo-secret',
  target: api.url, // default https://api.imweb.me
  basePath: '/shop-api',
  // who may ask: your own check (a session cookie, a till's token); with neither authorize nor public: 401
  authorize: (req) => req.headers.cookie === 'session=staff',
});
const server = createServer(proxy);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}/shop-api`;

async function ask(method, path, init = {}) {
  const res = await fetch(`${base}${path}`, { method, ...init, headers: { cookie: 'session=staff', ...init.headers } });
  const text = await res.text();
  let code = null;
  try {
    code = JSON.parse(text).code ?? null;
  } catch {}
  return { method, path, status: res.status, code, leaked: /demo-secret|access_token/.test(text) };
}

const results = [
  await ask('GET', '/v2/shop/coupons?offset=1&limit=10'),
  await ask('GET', '/v2/shop/coupons/WELCOME10', { headers: { cookie: 'session=guest' } }),
  await ask('GET', '/v2/auth?key=demo-key&secret=demo-secret'),
  await ask('GET', '/v2/auth'),
  await ask('POST', '/v2/auth', {
    body: JSON.stringify({ key: 'demo-key', secret: 'demo-secret' }),
    headers: { 'content-type': 'application/json' },
  }),
  await ask('POST', '/v2/shop/coupons', { body: '{}', headers: { 'content-type': 'application/json' } }),
  await ask('PUT', '/v2/shop/coupons/WELCOME10', { body: '{}' }),
  await ask('PATCH', '/v2/shop/products/13805/options/12', { body: '{}' }),
  await ask('DELETE', '/v2/shop/coupons/WELCOME10'),
  await ask('HEAD', '/v2/shop/coupons'),
  await ask('GET', '/v2/member/members'),
];
const reachedApi = api.requests.map((r) => `${r.method} ${r.path}`);

server.close();
proxy.close();
await api.close();
console.log(JSON.stringify({ results, reachedApi }));
