// A new Vite app (test/consumers/vite-app: no worker config; its vite.config.js is docs/proxy.md's recipe, pasted
// in) installs the packed shop-lookup, and @shop-lookup/relay for that recipe, pastes the docs' storefront example,
// and runs in headless Chromium: with the dev server and as a production build, online and offline.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundleText,
  exerciseApp,
  installFixture,
  launchChromium,
  packedTarballs,
  pageFiles,
  printTimings,
  readmeExample,
  serveApp,
  startShopApi,
  timed,
  type Fixture,
} from './harness';

let app: Fixture;
let browser: Browser;
let api: Awaited<ReturnType<typeof startShopApi>>;

beforeAll(async () => {
  const { shopLookup, relay } = await timed('pack', packedTarballs);
  const files = { ...(await pageFiles()), 'vite.config.js': await readmeExample('vite.config.js', 'docs/proxy.md') };
  app = await timed('install', async () => installFixture('vite-app', [shopLookup, relay], files));
  api = await startShopApi();
  browser = await launchChromium();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await app?.remove();
  printTimings('vite.test.ts');
}, 60_000);

describe('a Vite app that installs the packed tarball', { timeout: 240_000 }, () => {
  it('dev server: the worker loads from node_modules with no config; six lookups online, then offline', async () => {
    const vite = (await import(
      pathToFileURL(join(app.dir, 'node_modules/vite/dist/node/index.js')).href
    )) as typeof import('vite');
    // the app's own vite.config.js (docs/proxy.md's recipe) reads these
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
    try {
      await server.listen();
      const url = `http://127.0.0.1:${(server.httpServer!.address() as { port: number }).port}/`;
      const { workers } = await timed('dev run', () => exerciseApp(browser, url));
      expect(workers).toEqual([expect.stringMatching(/\/node_modules\/shop-lookup\/dist\/worker\.js/)]);
    } finally {
      await server.close();
    }
  });

  it('vite build: the worker becomes its own chunk, no Node-only code ships; six lookups online, then offline', async () => {
    await timed('vite build', () => app.run('node_modules/.bin/vite', ['build', '--logLevel', 'warn']));
    const dist = join(app.dir, 'dist');
    const code = await bundleText(dist);
    expect(code).not.toMatch(/node:http|createShopApiProxy|startMockShopApi/);
    const site = await serveApp(dist, api.proxy);
    try {
      const { workers } = await timed('build run', () => exerciseApp(browser, site.url));
      expect(workers).toEqual([expect.stringMatching(/\/assets\/worker-[\w-]+\.js$/)]);
    } finally {
      await site.close();
    }
  });

  it("vite build: the README's `worker` factory option works too", async () => {
    const site = await serveApp(join(app.dir, 'dist'), api.proxy);
    try {
      const { workers } = await timed('factory run', () =>
        exerciseApp(browser, `${site.url}/?worker=factory`, { storefront: false }),
      );
      expect(workers).toHaveLength(1);
    } finally {
      await site.close();
    }
  });
});
