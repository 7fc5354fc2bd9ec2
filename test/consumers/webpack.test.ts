// A new webpack 5 app (test/consumers/webpack-app: html-webpack-plugin, no worker config) installs the packed
// shop-lookup alone, as a browser app does (no server package comes along), pastes the README's storefront example,
// builds, and runs in headless Chromium, online and offline.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundleText,
  exerciseApp,
  installFixture,
  launchChromium,
  packedTarball,
  SERVER_PACKAGES,
  pageFiles,
  printTimings,
  serveApp,
  startShopApi,
  timed,
  type Fixture,
} from './harness';

let app: Fixture;
let browser: Browser;
let api: Awaited<ReturnType<typeof startShopApi>>;
let site: Awaited<ReturnType<typeof serveApp>>;

beforeAll(async () => {
  const tarball = await timed('pack', packedTarball);
  app = await timed('install', async () => installFixture('webpack-app', tarball, await pageFiles()));
  api = await startShopApi();
  browser = await launchChromium();
}, 600_000);

afterAll(async () => {
  await site?.close();
  await browser?.close();
  await api?.close();
  await app?.remove();
  printTimings('webpack.test.ts');
}, 60_000);

describe('a webpack 5 app that installs the packed tarball', { timeout: 240_000 }, () => {
  it('installs shop-lookup alone: no server package or server library lands in its node_modules', () => {
    expect(existsSync(join(app.dir, 'node_modules/shop-lookup/package.json'))).toBe(true);
    expect(SERVER_PACKAGES.filter((name) => existsSync(join(app.dir, 'node_modules', name)))).toEqual([]);
  });

  it('webpack build: follows new Worker(new URL(...)) in the package, no Node-only code ships', async () => {
    await timed('webpack build', () => app.run('node_modules/.bin/webpack', ['--no-color']));
    const code = await bundleText(join(app.dir, 'dist'));
    expect(code).not.toMatch(/node:http|createShopApiProxy|startMockShopApi/);
    site = await serveApp(join(app.dir, 'dist'), api.proxy);
  });

  it("the README's storefront example: the worker starts, six lookups online, then offline", async () => {
    const { workers } = await timed('build run', () => exerciseApp(browser, site.url));
    // a chunk of its own, served from the app's origin (named after the Worker's `name` option, or numbered when
    // the factory page refers to the same module too)
    expect(workers).toEqual([expect.stringMatching(new RegExp(`^${site.url}/[\\w-]+\\.js$`))]);
  });

  it("the README's `worker` factory option works too", async () => {
    const { workers } = await timed('factory run', () =>
      exerciseApp(browser, `${site.url}/?worker=factory`, { storefront: false }),
    );
    expect(workers).toHaveLength(1);
  });
});
