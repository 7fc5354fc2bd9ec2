// A till the relay command refuses, as a newcomer meets it: the relay on this very machine (no OPS_TOKEN, so the
// operators' status is open to loopback) in front of the mock API, and a till without a token, with a token of
// another shop, or with one the relay never issued. The refusal names the token, never the host's `authorize`: it
// leads with "The relay refused this till's token:" and the relay's reason in status() and in a verdict; a token
// for another shop names both shops; the source is `relay` (a relay that refuses the till is still a relay). And the
// docs' way for a shop's server to sign a till's token makes one the relay takes.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '@shop-lookup/mock-server';
import { createShopRelay } from '@shop-lookup/relay';
import { createTillAccess } from '../../relay/src/server/tillAccess';
import { createTillTokens, signTillToken } from '../../relay/src/server/tillTokens';
import type { ShopLookup } from '../src';
import { KEY, lookupFor, next, SECRET, startMock } from './utils';

const RELAY_SHOP = 'relay-shop';
const SIGNING = 'till-token-signing-secret-0123456789abcdef';
const signed = (shop: string) =>
  signTillToken({ secret: SIGNING, shop, till: 'front-1', expiresAt: Date.now() + 86_400_000 });

describe("a till the relay command refuses (its token), on the relay's own machine", () => {
  let mock: MockShopApi;
  let server: Server;
  let relay: ReturnType<typeof createShopRelay>;
  let base: string;
  const tills: ShopLookup[] = [];

  beforeEach(async () => {
    mock = await startMock();
    // as the command makes it: till tokens, no OPS_TOKEN (loopback may read the status), no storefront
    const access = createTillAccess({
      tokens: createTillTokens({ secret: SIGNING, shop: RELAY_SHOP }),
      storefrontOpen: false,
      public: false,
      opsToken: undefined,
      trustProxyHops: 0,
    });
    relay = createShopRelay({
      key: KEY,
      secret: SECRET,
      target: mock.url,
      basePath: '/shop-api',
      shopId: RELAY_SHOP,
      authorize: access.authorize,
      clientId: access.clientId,
      // (every till here is refused several times: the bound on refusals is another test's)
      clientLimits: { refusedPerMinute: 1000 },
      rateLimits: false,
    });
    server = createServer((req, res) => relay(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/shop-api`;
    await relay.refresh();
  });

  afterEach(async () => {
    for (const t of tills.splice(0)) await t.close();
    await relay.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await mock.close();
  });

  const till = (token: string | undefined) => {
    const t = lookupFor({ url: base }, { auth: undefined, ...(token === undefined ? {} : { token }) });
    tills.push(t);
    return t;
  };

  const cases: [string, string | undefined, RegExp][] = [
    ['no token', undefined, /send Authorization: Bearer <till token>/],
    [
      "another shop's token",
      signed('my-shop'),
      /this till token is for shop "my-shop", and this relay serves shop "relay-shop": .*SHOP_ID=relay-shop/,
    ],
    ['a token the relay never issued', 'garbage-till-token-0123456789', /this till token is not known here/],
  ];

  for (const [name, token, reason] of cases) {
    it(`with ${name}: status() and the verdict lead with "The relay refused this till's token:" and its reason; the source is relay`, async () => {
      const t = till(token);
      const report = await t.sync();
      expect(report.ok).toBe(false);
      expect(report.errors.map((e) => e.code)).toEqual(['forbidden']);
      const status = await next(t.status(), (s) => s.lastError !== null && s.source !== undefined);
      expect(status).toMatchObject({ source: 'relay', online: true, lastError: { code: 'forbidden', status: 401 } });
      expect(status.lastError!.message).toMatch(/^The relay refused this till's token: /);
      expect(status.lastError!.message).toMatch(reason);
      expect(status.lastError!.message).not.toMatch(/authorize|does not allow this client/);

      const verdict = await t.validateCoupon(MOCK_CODES.welcomeCoupon, { amount: 32_000 });
      expect(verdict).toMatchObject({ ok: false, reason: 'unchecked', detail: { error: { code: 'forbidden' } } });
      expect(verdict.detail!.message).toMatch(/^The relay refused this till's token: /);
      expect(verdict.detail!.message).toMatch(reason);
      expect(verdict.detail!.message).toMatch(/Code "WELCOME10" is not known on this till, so it was not checked\.$/);
    });
  }

  it("answers a refused till's discovery with its refusal, though loopback may read the operators' status", async () => {
    const res = await fetch(`${base}/relay/v1`, { headers: { authorization: `Bearer ${signed('my-shop')}` } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      refusal: { route: 'discovery', by: 'relay' },
      message: expect.stringMatching(/^UNAUTHORIZED: this till token is for shop "my-shop"/),
    });
    // the operators' route itself stays open to this machine, and a good token reads the discovery answer
    expect((await fetch(`${base}/relay/v1/status`)).status).toBe(200);
    const good = await fetch(`${base}/relay/v1`, { headers: { authorization: `Bearer ${signed(RELAY_SHOP)}` } });
    expect(await good.json()).toMatchObject({ relay: 'shop-lookup', shop: RELAY_SHOP });
  });
});

describe("docs/relay.md's tillToken(): a till's token made by the shop's own server", () => {
  it('is accepted by the relay command for its SHOP_ID, and refused naming both shops for another', async () => {
    // the block as the page shows it (indented in its list item), imported as a module of its own
    const page = await readFile(new URL('../../../docs/relay.md', import.meta.url), 'utf8');
    const block = /^( *)```js title="tillToken\.js"\n([\s\S]*?)\n\1```/m.exec(page);
    expect(block, 'docs/relay.md has the tillToken.js block').not.toBeNull();
    const code = block![2]!.replace(new RegExp(`^${block![1]}`, 'gm'), '');
    const dir = await mkdtemp(join(tmpdir(), 'till-token-'));
    try {
      await writeFile(join(dir, 'tillToken.mjs'), code);
      const { tillToken } = (await import(pathToFileURL(join(dir, 'tillToken.mjs')).href)) as {
        tillToken(till: string, secret: string, shop: string): string;
      };
      const tokens = createTillTokens({ secret: SIGNING, shop: RELAY_SHOP });
      expect(tokens.check(tillToken('front-2', SIGNING, RELAY_SHOP))).toEqual({ ok: true, till: 'front-2' });
      expect(tokens.check(tillToken('front-2', SIGNING, 'my-shop'))).toMatchObject({
        ok: false,
        reason: 'wrong_shop',
        shop: 'my-shop',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
