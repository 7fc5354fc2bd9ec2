// The docs' vite.config.js recipes, pasted as they are into a Vite app that installed the packed tarball: `vite
// build` exits and asks nothing of the shop API (credentials set, as on a developer's machine), and the dev server
// serves /shop-api from them (the relay's feed from the packed mock API).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installFixture,
  packedTarballs,
  pageFiles,
  printTimings,
  readmeExample,
  startShopApi,
  timed,
  type Fixture,
} from './harness';

/** Loaded into `vite build` with --import: every fetch the process makes is appended to FETCH_LOG. */
const RECORD_FETCH = `import { appendFileSync } from 'node:fs';
const real = globalThis.fetch;
globalThis.fetch = (input, init) => {
  appendFileSync(process.env.FETCH_LOG, String(input instanceof Request ? input.url : input) + '\\n');
  return real(input, init);
};
`;

const RECIPES = [
  ['docs/proxy.md', 'the credential proxy'],
  ['docs/relay.md', 'the relay'],
] as const;

let app: Fixture;
let api: Awaited<ReturnType<typeof startShopApi>>;

beforeAll(async () => {
  const { shopLookup, relay } = await timed('pack', packedTarballs);
  app = await timed('install', async () =>
    installFixture('vite-app', [shopLookup, relay], { ...(await pageFiles()), 'record-fetch.mjs': RECORD_FETCH }),
  );
  api = await startShopApi();
}, 600_000);

afterAll(async () => {
  await api?.close();
  await app?.remove();
  printTimings('recipes.test.ts');
}, 60_000);

describe("the docs' vite.config.js recipes", { timeout: 180_000 }, () => {
  for (const [page, what] of RECIPES) {
    it(`${page} (${what}): vite build exits and makes no request`, async () => {
      await writeFile(join(app.dir, 'vite.config.js'), await readmeExample('vite.config.js', page));
      const log = join(app.dir, `fetches-${what.replace(/\W+/g, '-')}.log`);
      await writeFile(log, '');
      // what a developer has in their shell: real-looking credentials, the real API as target
      const env = {
        SHOP_API_KEY: 'a-key',
        SHOP_API_SECRET: 'a-secret',
        FETCH_LOG: log,
        NODE_OPTIONS: `--import=${pathToFileURL(join(app.dir, 'record-fetch.mjs')).href}`,
      };
      // a build that does not exit fails here (the recipe of old started the relay with the config, and it never let
      // go)
      await timed(`build (${what})`, () =>
        app.run('node_modules/.bin/vite', ['build', '--logLevel', 'warn'], { env, timeout: 90_000 }),
      );
      expect(await readFile(log, 'utf8')).toBe('');
    });
  }

  it('docs/relay.md: the dev server serves the relay, its feed listed from the mock API', async () => {
    await writeFile(join(app.dir, 'vite.config.js'), await readmeExample('vite.config.js', 'docs/relay.md'));
    const vite = (await import(
      pathToFileURL(join(app.dir, 'node_modules/vite/dist/node/index.js')).href
    )) as typeof import('vite');
    Object.assign(process.env, {
      SHOP_API_KEY: 'demo-key',
      SHOP_API_SECRET: 'demo-secret',
      SHOP_API_TARGET: api.mock.url,
    });
    const server = await vite.createServer({
      root: app.dir,
      logLevel: 'warn',
      clearScreen: false,
      server: { port: 0, host: '127.0.0.1' },
    });
    await server.listen();
    const base = `http://127.0.0.1:${(server.httpServer!.address() as { port: number }).port}/shop-api`;
    try {
      expect(await (await fetch(`${base}/relay/v1`)).json()).toMatchObject({ relay: 'shop-lookup', protocol: 1 });
      // the relay's first listing of the mock: until it is done, the feed says "not ready"
      await expect.poll(async () => (await fetch(`${base}/relay/v1/feed`)).status, { timeout: 30_000 }).toBe(200);
      const snapshot = (await (await fetch(`${base}/relay/v1/feed`)).json()) as { upserts: unknown[] };
      expect(snapshot.upserts.length).toBeGreaterThanOrEqual(api.mock.data.coupons.length);
    } finally {
      await server.close();
    }
  });
});
