// Consumer tests: apps OUTSIDE the repository install the packed tarballs the way a user would, then build and run.
// - packedTarballs(): `npm pack` of the three published packages (shop-lookup, @shop-lookup/relay,
//   @shop-lookup/mock-server), built in a private copy (so it never races a concurrent `npm run build`) and shared
//   by the test files of one run through a lock directory; with them, one install of the two server packages
//   (serverPackages()) that the browser tests run their mock API and proxy from.
// - installFixture(): copies test/consumers/<name>/ to a temp dir and runs `npm install <tarballs>` there (the npm
//   cache makes it fast; nothing is installed into the repo).
// - serveApp(): the README's node:http recipe: static files plus the PACKED credential proxy at /shop-api, in front
//   of the PACKED mock API. exerciseApp(): the six lookups online, then offline, in headless Chromium.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { MockShopApi } from '@shop-lookup/mock-server';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { launchChromium } from '../../scripts/launch-chromium.mjs';

const run = promisify(execFile);
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const consumersDir = fileURLToPath(new URL('.', import.meta.url));
const workRoot = join(tmpdir(), 'shop-lookup-consumers');

/** What goes into the packages' build (what `npm run build` reads; their dist/, node_modules/ and tests aside). */
const PACKAGE_SOURCES = [
  'package.json',
  'tsconfig.base.json',
  'scripts/finish-types.mjs',
  'packages/shop-lookup',
  'packages/mock-server',
  'packages/relay',
  'packages/shop-api',
  // the relay's build ships the server's pages of docs/ (packages/relay/vite.config.ts)
  'docs',
];
const SKIPPED = /(^|[/\\])(dist|node_modules|test)([/\\]|$)/;

/** The published packages: where each is packed from, by the name the tests use. */
const PUBLISHED = {
  shopLookup: 'packages/shop-lookup',
  relay: 'packages/relay',
  mockServer: 'packages/mock-server',
} as const;
export type Tarballs = Record<keyof typeof PUBLISHED, string>;

/** Server libraries, and the server packages: none of them may land in a browser app's node_modules. */
export const SERVER_PACKAGES = [
  '@shop-lookup/relay',
  '@shop-lookup/mock-server',
  'redis',
  '@redis/client',
  'rate-limiter-flexible',
  'pino',
  'prom-client',
];

/** Timings of the steps, printed at the end of each test file (the report asked for them). */
const timings: Record<string, number> = {};
export async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings[label] = Date.now() - started;
  }
}
export function printTimings(file: string): void {
  const parts = Object.entries(timings).map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)} s`);
  console.log(`[consumers] ${file}: ${parts.join(', ')}`);
}

async function filesOf(path: string, skip?: RegExp): Promise<string[]> {
  const s = await stat(path);
  if (!s.isDirectory()) return [path];
  const entries = (await readdir(path, { withFileTypes: true })).filter((e) => !skip?.test(e.name));
  const nested = await Promise.all(
    entries.sort((a, b) => (a.name < b.name ? -1 : 1)).map((e) => filesOf(join(path, e.name), skip)),
  );
  return nested.flat();
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const source of PACKAGE_SOURCES) {
    for (const file of await filesOf(join(repoRoot, source), SKIPPED)) {
      hash
        .update(relative(repoRoot, file))
        .update('\0')
        .update(await readFile(file))
        .update('\0');
    }
  }
  return hash.digest('hex').slice(0, 16);
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Packs of older sources, unused for an hour: they would pile up in the temp dir. */
async function removeStalePacks(current: string): Promise<void> {
  for (const entry of await readdir(workRoot)) {
    const path = join(workRoot, entry);
    if (!entry.startsWith('pack-') || path === current || entry.endsWith('.lock')) continue;
    const age =
      Date.now() -
      (await stat(path).then(
        (s) => s.mtimeMs,
        () => Date.now(),
      ));
    if (age > 3_600_000) await rm(path, { recursive: true, force: true });
  }
}

/**
 * The tarballs of the current sources: `npm run build` (every package), then `npm pack --ignore-scripts` of each
 * published one, in a copy of the sources with the repo's node_modules linked in; and the server packages installed
 * once beside them (serverPackages()). Cached by content hash; one builder at a time.
 */
export async function packedTarballs(): Promise<Tarballs> {
  const dir = join(workRoot, `pack-${await sourceHash()}`);
  const done = join(dir, 'tarballs.json');
  const lock = `${dir}.lock`;
  await mkdir(workRoot, { recursive: true });
  for (const deadline = Date.now() + 600_000; Date.now() < deadline; ) {
    if (await exists(done)) return JSON.parse(await readFile(done, 'utf8')) as Tarballs;
    try {
      await mkdir(lock);
    } catch {
      // another test file is packing: wait for it (a lock older than 10 minutes is a crashed run's)
      const age =
        Date.now() -
        (await stat(lock).then(
          (s) => s.mtimeMs,
          () => Date.now(),
        ));
      if (age > 600_000) await rm(lock, { recursive: true, force: true });
      await sleep(500);
      continue;
    }
    try {
      const build = join(dir, 'package');
      await rm(dir, { recursive: true, force: true });
      await mkdir(build, { recursive: true });
      for (const source of PACKAGE_SOURCES) {
        await cp(join(repoRoot, source), join(build, source), {
          recursive: true,
          filter: (src) => !SKIPPED.test(relative(repoRoot, src)),
        });
      }
      await symlink(join(repoRoot, 'node_modules'), join(build, 'node_modules'), 'dir');
      // Build first, then pack without lifecycle scripts: build logs (coloured under CI=true) stay out of
      // the JSON that `npm pack --json` prints on stdout.
      await run('npm', ['run', 'build'], { cwd: build, timeout: 400_000, maxBuffer: 64 << 20 });
      const tarballs = {} as Tarballs;
      for (const [name, from] of Object.entries(PUBLISHED) as [keyof Tarballs, string][]) {
        const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
          cwd: join(build, from),
          timeout: 240_000,
          maxBuffer: 64 << 20,
        });
        const [info] = JSON.parse(stdout) as { filename: string }[];
        tarballs[name] = join(dir, info!.filename);
      }
      // the mock API and the proxy the browser tests serve their apps with, from the packed server packages
      const servers = join(dir, 'servers');
      await mkdir(servers);
      await writeFile(
        join(servers, 'package.json'),
        JSON.stringify({ name: 'consumer-servers', private: true, type: 'module' }),
      );
      await npmInstall(servers, [tarballs.relay, tarballs.mockServer]);
      await writeFile(done, JSON.stringify(tarballs));
      await removeStalePacks(dir);
      return tarballs;
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
  throw new Error('packedTarballs: timed out waiting for another test file to pack');
}

/** The tarball of shop-lookup, the browser package. */
export async function packedTarball(): Promise<string> {
  return (await packedTarballs()).shopLookup;
}

function npmInstall(dir: string, specs: string[]): Promise<unknown> {
  return run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...specs], {
    cwd: dir,
    timeout: 300_000,
    maxBuffer: 64 << 20,
  });
}

export interface Fixture {
  /** The temp copy where the app and its node_modules live. */
  dir: string;
  /** Runs a command of the app (`node_modules/.bin/...` or node) in its directory. */
  run(
    file: string,
    args: string[],
    options?: { env?: NodeJS.ProcessEnv; timeout?: number },
  ): Promise<{ stdout: string; stderr: string }>;
  /** Imports one of the app's dependencies by its package specifier, through the package's `exports`. */
  importDep<T>(specifier: string): Promise<T>;
  remove(): Promise<void>;
}

/** Copies test/consumers/<name>/ (and the shared page files) to a temp dir and installs it with the tarball(s). */
export async function installFixture(
  name: string,
  tarballs: string | string[],
  extraFiles: Record<string, string> = {},
): Promise<Fixture> {
  await mkdir(workRoot, { recursive: true });
  const dir = await mkdtemp(join(workRoot, `${name}-`));
  await cp(join(consumersDir, name), dir, {
    recursive: true,
    filter: (src) => !/[/\\](node_modules|dist)([/\\]|$)/.test(src),
  });
  for (const [path, text] of Object.entries(extraFiles)) {
    await mkdir(resolve(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  await npmInstall(dir, typeof tarballs === 'string' ? [tarballs] : tarballs);
  return fixtureAt(dir);
}

/** A fixture over an installed app directory. */
function fixtureAt(dir: string): Fixture {
  return {
    dir,
    run: (file, args, options = {}) =>
      run(file, args, {
        cwd: dir,
        env: { ...process.env, ...options.env },
        timeout: options.timeout ?? 180_000,
        maxBuffer: 64 << 20,
      }),
    async importDep<T>(specifier: string): Promise<T> {
      const [scope, pkgName, ...rest] = specifier.startsWith('@')
        ? specifier.split('/')
        : ['', ...specifier.split('/')];
      const pkgDir = join(dir, 'node_modules', scope ?? '', pkgName!);
      const pkg = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as {
        exports: Record<string, unknown>;
      };
      const entry = pkg.exports[rest.length ? `./${rest.join('/')}` : '.'] as { default: string };
      return (await import(pathToFileURL(join(pkgDir, entry.default)).href)) as T;
    },
    // (retries: a dev server's dependency optimizer may still be writing into node_modules/.vite)
    remove: () =>
      process.env.KEEP_CONSUMERS ? Promise.resolve() : rm(dir, { recursive: true, force: true, maxRetries: 5 }),
  };
}

/**
 * A code block of the docs titled `title` (```js title="storefront.js"), as a user would paste it: from `page`
 * (a path such as 'docs/relay.md'), else the first of README.md, then docs/*.md, that has one.
 */
export async function readmeExample(title: string, page?: string): Promise<string> {
  const pages = page
    ? [page]
    : [
        'README.md',
        ...(await readdir(join(repoRoot, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
      ];
  // a block may be indented (inside a list item): its lines lose the fence's indentation
  const fence = '```';
  const name = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`^( *)${fence}\\w+ title="${name}"\\n([\\s\\S]*?)\\n\\1${fence}`, 'm');
  for (const path of pages) {
    const block = pattern.exec(await readFile(join(repoRoot, path), 'utf8'));
    if (block) return `${block[2]!.replace(new RegExp(`^${block[1]}`, 'gm'), '')}\n`;
  }
  throw new Error(`${page ?? 'neither README.md nor docs/'} has no code block titled ${title}`);
}

/** The app's shared page code (test/consumers/page/) plus the README's storefront example, for a fixture's src/. */
export async function pageFiles(): Promise<Record<string, string>> {
  return {
    'src/main.js': await readFile(join(consumersDir, 'page/main.js'), 'utf8'),
    'src/testHook.js': await readFile(join(consumersDir, 'page/testHook.js'), 'utf8'),
    'src/factory.js': await readFile(join(consumersDir, 'page/factory.js'), 'utf8'),
    'src/storefront.js': await readmeExample('storefront.js'),
  };
}

type ProxyMiddleware = ((req: unknown, res: unknown, next?: () => void) => void) & { close(): void };

/**
 * The packed server packages (@shop-lookup/relay and @shop-lookup/mock-server), installed once per pack: shared,
 * never removed.
 */
export async function serverPackages(): Promise<Fixture> {
  const { relay } = await packedTarballs();
  return { ...fixtureAt(join(dirname(relay), 'servers')), remove: () => Promise.resolve() };
}

/** The packed mock API (`@shop-lookup/mock-server`) and a packed proxy (`@shop-lookup/relay`) in front of it. */
export async function startShopApi(): Promise<{ mock: MockShopApi; proxy: ProxyMiddleware; close(): Promise<void> }> {
  const servers = await serverPackages();
  const { startMockShopApi } = await servers.importDep<{ startMockShopApi(): Promise<MockShopApi> }>(
    '@shop-lookup/mock-server',
  );
  const { createShopApiProxy } = await servers.importDep<{ createShopApiProxy(o: object): ProxyMiddleware }>(
    '@shop-lookup/relay',
  );
  const mock = await startMockShopApi();
  // public: a test server on loopback; the README's recipe passes authorize
  const proxy = createShopApiProxy({
    key: 'demo-key',
    secret: 'demo-secret',
    target: mock.url,
    basePath: '/shop-api',
    public: true,
  });
  return {
    mock,
    proxy,
    async close() {
      proxy.close();
      await mock.close();
    },
  };
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.css': 'text/css',
};

/** Serves a built app's static files, with the proxy at /shop-api (the README's node:http recipe). */
export async function serveApp(root: string, proxy: ProxyMiddleware): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    proxy(req, res, async () => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      const file = resolve(root, `.${path.endsWith('/') ? `${path}index.html` : path}`);
      if (!file.startsWith(root)) return void res.writeHead(403).end();
      try {
        const body = await readFile(file);
        res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
      } catch {
        res.writeHead(404).end('not found');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

export { launchChromium };

/** Every lookup with its arguments, against the mock's default data. */
export const SIX_LOOKUPS: [string, unknown[]][] = [
  ['coupons', []],
  ['coupon', ['WELCOME10']],
  ['issuedCoupon', ['IC-0000-OPEN']],
  ['productOptions', [13805]],
  ['productOptionByNo', [13805, 12]],
  ['productOptionByCode', [13805, '12']],
];

/** A lookup's answer as the page hands it over. */
export interface LookupAnswer {
  data: unknown;
  syncedAt: number | null;
  fetching: boolean;
  offline: boolean;
  error: { code: string } | null;
}

/** The answer holds data the API confirmed, online or offline as expected. */
export function expectFound(name: string, r: LookupAnswer, offline: boolean): void {
  expect(r.offline, `${name}.offline`).toBe(offline);
  expect(r.syncedAt, `${name}.syncedAt`).toEqual(expect.any(Number));
  if (Array.isArray(r.data)) expect(r.data.length, `${name}: records`).toBeGreaterThan(0);
  else expect(r.data, `${name}.data`).toBeTruthy();
}

/** Uncaught exceptions and console errors of `page` from now on (failed requests, e.g. offline, are expected). */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on(
    'console',
    (m) =>
      void (m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(`console: ${m.text()}`)),
  );
  return errors;
}

/**
 * The set-up of a browser consumer test file: before all, the fixture `name` installed from the packed tarballs
 * `install` picks (default shop-lookup alone; with `files()` added), the packed mock API and proxy, and Chromium;
 * after all, everything closed again.
 * @example const ctx = useBrowserApp('react-app', 'react.test.ts', async () => ({})); it('…', () => ctx.app.dir);
 */
export function useBrowserApp(
  name: string,
  testFile: string,
  files: () => Promise<Record<string, string>>,
  install: (tarballs: Tarballs) => string[] = (t) => [t.shopLookup],
) {
  const ctx = {} as { app: Fixture; api: Awaited<ReturnType<typeof startShopApi>>; browser: Browser };
  beforeAll(async () => {
    const tarballs = await timed('pack', packedTarballs);
    ctx.app = await timed('install', async () => installFixture(name, install(tarballs), await files()));
    ctx.api = await startShopApi();
    ctx.browser = await launchChromium();
  }, 600_000);
  afterAll(async () => {
    await ctx.browser?.close();
    await ctx.api?.close();
    await ctx.app?.remove();
    printTimings(testFile);
  }, 60_000);
  return ctx;
}

export interface AppRun {
  /** URLs of the page's workers once the lookups answered. */
  workers: string[];
  /** Uncaught exceptions and console errors of the page (empty, or the test failed). */
  errors: string[];
}

/**
 * Opens the app in a fresh context and checks what a user would see: the worker starts, all six lookups answer
 * online; then with the network cut (`context.setOffline(true)`) a sync fails and all six still answer, offline.
 * `storefront`: also check what the README's storefront example rendered; it keeps coupons by code
 * (`coupons: 'byCode'`), so its `coupons()` is never the confirmed list (the other five are checked as usual).
 */
export async function exerciseApp(browser: Browser, url: string, { storefront = true } = {}): Promise<AppRun> {
  const context: BrowserContext = await browser.newContext();
  try {
    const page: Page = await context.newPage();
    const errors = pageErrors(page);
    const firstWorker = page.waitForEvent('worker', { timeout: 60_000 });
    await page.goto(url);
    await page.waitForFunction(() => 'consumerTest' in window, null, { timeout: 60_000 });
    await firstWorker;

    const report = await page.evaluate(() => (window as any).consumerTest.sync());
    expect(report, `sync() online; page errors: ${errors.join(' | ')}`).toMatchObject({ ok: true });
    const lookups = storefront ? SIX_LOOKUPS.filter(([name]) => name !== 'coupons') : SIX_LOOKUPS;
    if (storefront) {
      const list: LookupAnswer = await page.evaluate(() => (window as any).consumerTest.settle('coupons', [], false));
      expect(list.syncedAt, "a storefront's coupons(): never the shop's list").toBeNull();
    }
    for (const [name, args] of lookups) {
      const r: LookupAnswer = await page.evaluate(([n, a]) => (window as any).consumerTest.settle(n, a, false), [
        name,
        args,
      ] as const);
      expectFound(name, r, false);
    }
    if (storefront) {
      await page.waitForFunction(() => document.querySelectorAll('#options option').length > 0, null, {
        timeout: 30_000,
      });
      await page.waitForFunction(() => /할인/.test(document.querySelector('#coupon')?.textContent ?? ''), null, {
        timeout: 30_000,
      });
    }
    const workers = page.workers().map((w) => w.url());

    await context.setOffline(true);
    const offlineReport = await page.evaluate(() => (window as any).consumerTest.sync());
    expect(offlineReport.ok, 'sync() offline').toBe(false);
    expect(offlineReport.errors[0]?.code).toBe('network_error');
    for (const [name, args] of lookups) {
      const r: LookupAnswer = await page.evaluate(([n, a]) => (window as any).consumerTest.settle(n, a, true), [
        name,
        args,
      ] as const);
      expectFound(name, r, true);
    }
    if (storefront) {
      await page.waitForFunction(
        () => document.querySelector('#coupon')?.getAttribute('data-offline') === 'true',
        null,
        {
          timeout: 30_000,
        },
      );
      expect(await page.textContent('#coupon')).toMatch(/할인/);
    }
    expect(errors).toEqual([]);
    return { workers, errors };
  } finally {
    await context.close();
  }
}

/** Every JS file of a build output, concatenated: to look for code that must not be there. */
export async function bundleText(dir: string): Promise<string> {
  const files = (await filesOf(dir)).filter((f) => f.endsWith('.js'));
  return (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
}
