// Node scripts against the packed tarballs (shop-lookup, @shop-lookup/relay, @shop-lookup/mock-server): the credential
// proxy refuses /v2/auth and every non-GET (a consumer script using the README's node:http recipe), the relay runs on
// its memory store with its Redis packages installed along and names an unreachable Redis, and the README's Node
// example runs.
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installFixture, packedTarballs, printTimings, repoRoot, timed, type Fixture } from './harness';

let app: Fixture;

beforeAll(async () => {
  const { shopLookup, relay, mockServer } = await timed('pack', packedTarballs);
  app = await timed('install', () => installFixture('node-app', [shopLookup, relay, mockServer]));
  await cp(join(repoRoot, 'examples/node-offline.mjs'), join(app.dir, 'node-offline.mjs'));
}, 600_000);

afterAll(async () => {
  await app?.remove();
  printTimings('node.test.ts');
}, 60_000);

interface Asked {
  method: string;
  path: string;
  status: number;
  code: number | null;
  leaked: boolean;
}

describe('Node scripts against the packed package', { timeout: 120_000 }, () => {
  it('the packed proxy refuses /v2/auth and every non-GET, and forwards the GETs it serves', async () => {
    const { stdout } = await timed('proxy check', () => app.run('node', ['proxy-check.mjs']));
    const { results, reachedApi } = JSON.parse(stdout) as { results: Asked[]; reachedApi: string[] };
    const byRequest = Object.fromEntries(results.map((r) => [`${r.method} ${r.path}`, r]));

    expect(byRequest['GET /v2/shop/coupons?offset=1&limit=10']).toMatchObject({ status: 200, code: 200 });
    for (const auth of ['GET /v2/auth?key=demo-key&secret=demo-secret', 'GET /v2/auth', 'POST /v2/auth']) {
      expect(byRequest[auth]!.status, auth).toBe(404);
    }
    for (const write of [
      'POST /v2/shop/coupons',
      'PUT /v2/shop/coupons/WELCOME10',
      'PATCH /v2/shop/products/13805/options/12',
      'DELETE /v2/shop/coupons/WELCOME10',
      'HEAD /v2/shop/coupons',
    ]) {
      expect(byRequest[write]!.status, write).toBe(405);
    }
    expect(byRequest['GET /v2/member/members']!.status).toBe(404);
    // authorize said no: 403, and nothing reached the API
    expect(byRequest['GET /v2/shop/coupons/WELCOME10']).toMatchObject({ status: 403, code: -5 });
    expect(results.filter((r) => r.leaked)).toEqual([]);
    // upstream saw only the proxy's own token request and the one GET it serves: nothing refused got through
    expect(reachedApi.filter((r) => !r.endsWith('/v2/auth'))).toEqual(['GET /v2/shop/coupons']);
    expect(reachedApi.filter((r) => r.endsWith('/v2/auth'))).toHaveLength(1);
  });

  it('the relay works on its memory store, its Redis packages came along, an unreachable Redis is named', async () => {
    const { stdout } = await timed('relay check', () => app.run('node', ['relay-check.mjs']));
    const { records, redisError, installed } = JSON.parse(stdout) as {
      records: number;
      redisError: string | null;
      installed: string[];
    };
    expect(installed).toEqual(['redis', 'rate-limiter-flexible']);
    expect(records).toBeGreaterThan(0);
    expect(redisError).toMatch(/^redis_unreachable: Redis at redis:\/\/127\.0\.0\.1:1 is unreachable/);
  });

  it("the README's Node example runs against the installed package, online then offline", async () => {
    const { stdout } = await timed('node example', () => app.run('node', ['node-offline.mjs'], { timeout: 90_000 }));
    const [online, offline] = stdout.split('-- offline');
    for (const name of [
      'coupons',
      'coupon',
      'issuedCoupon',
      'productOptions',
      'productOptionByNo',
      'productOptionByCode',
    ]) {
      expect(online).toMatch(new RegExp(`^${name}: .+ \\| offline: false \\| syncedAt: 20`, 'm'));
      expect(offline).toMatch(new RegExp(`^${name}: .+ \\| offline: true \\| syncedAt: 20`, 'm'));
    }
    expect(online).toContain('coupons: 240 records');
    expect(offline).toContain('coupons: 240 records');
    expect(stdout).toMatch(/sync without the API: ok=false, network_error: Could not reach the shop API/);
  });
});
