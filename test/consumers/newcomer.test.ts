// The quick start, docs/embedding.md's "Add it to your Vite app", as a newcomer follows it: a fresh Vite + React + TS
// app (test/consumers/newcomer-app: create-vite's react-ts template) installs the packed tarball and takes the page's
// vite.config.ts and src/CouponCheck.tsx as written. Then: `tsc -b` (strict) is clean, `vite build` exits and
// ships no server code, and in Chromium the page answers the six lookups from the mock through the dev server and
// `vite preview`, shows them as a person reads them, opens and answers from IndexedDB when reloaded with the browser
// fully offline ("Reload offline", the template's images included), and syncs by itself when it was started while
// the API was down. Then the README's "Run the relay" lines as written, in this app: the packed mock command, the
// relay command, a till's token, and the app on another origin whose lookup is docs/embedding.md's "a till on
// another origin" one, reading the relay's URL and the token from its config.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockShopApi } from '../../packages/mock-server/src';
import { overlapping, stackedInOrder, type Box } from '../e2e/layout';
import {
  bundleText,
  expectFound,
  installFixture,
  launchChromium,
  packedTarballs,
  pageErrors,
  printTimings,
  readmeExample,
  SIX_LOOKUPS,
  timed,
  type Fixture,
  type LookupAnswer,
} from './harness';

/** The page of the quick start ("Add it to your Vite app"); the relay lines are the README's. */
const QUICK_START = 'docs/embedding.md';

let app: Fixture;
let browser: Browser;
let vite: typeof import('vite');

beforeAll(async () => {
  // the quick start's install: shop-lookup, and the relay and the mock API for the dev server (devDependencies)
  const { shopLookup, relay, mockServer } = await timed('pack', packedTarballs);
  const files = {
    'vite.config.ts': await readmeExample('vite.config.ts', QUICK_START),
    'src/CouponCheck.tsx': await readmeExample('CouponCheck.tsx', QUICK_START),
    'test-hook/testHook.js': await readFile(new URL('./page/testHook.js', import.meta.url), 'utf8'),
  };
  app = await timed('install', () => installFixture('newcomer-app', [shopLookup, relay, mockServer], files));
  vite = (await import(
    pathToFileURL(join(app.dir, 'node_modules/vite/dist/node/index.js')).href
  )) as typeof import('vite');
  browser = await launchChromium();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await app?.remove();
  printTimings('newcomer.test.ts');
}, 60_000);

/** Runs `work` with these environment variables set (the quick start's vite.config.ts reads them when a server starts). */
async function withEnv<T>(env: Record<string, string | undefined>, work: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  };
  set(env);
  try {
    return await work();
  } finally {
    set(saved);
  }
}
/** The quick start's setting: no key, so the config starts its own mock shop. */
const MOCK_ENV = { SHOP_API_KEY: undefined, SHOP_API_SECRET: undefined, SHOP_API_TARGET: undefined };

const sync = (page: Page) =>
  page.evaluate(() => (window as any).consumerTest.sync()) as Promise<{ ok: boolean; errors: { code: string }[] }>;
const settle = (page: Page, name: string, args: unknown[], offline: boolean) =>
  page.evaluate(([n, a, o]) => (window as any).consumerTest.settle(n, a, o), [
    name,
    args,
    offline,
  ] as const) as Promise<LookupAnswer>;
/**
 * The lookup's answer once it is confirmed (syncedAt set). A tracked product's options can come a moment after the
 * first sync: the relay checks a product new to it with the API before it lists it, and its feed brings them then.
 */
const confirmedAnswer = async (page: Page, name: string, args: unknown[]): Promise<LookupAnswer> => {
  let last: LookupAnswer | undefined;
  await expect
    .poll(async () => (last = await settle(page, name, args, false)).syncedAt, {
      timeout: 20_000,
      interval: 250,
      message: `${name} confirmed`,
    })
    .not.toBeNull();
  return last!;
};

/** Opens the app and waits for its test hook. */
async function open(context: BrowserContext, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors = pageErrors(page);
  await page.goto(url);
  await page.waitForFunction(() => 'consumerTest' in window, null, { timeout: 60_000 });
  return { page, errors };
}

/** What a user does with the quick start's component: type a code, press Check; resolves with the two outputs. */
async function check(
  page: Page,
  code: string,
  verdict: RegExp,
): Promise<{ coupon: string; verdict: string; offline: string | null }> {
  await page.fill('input[name=code]', code);
  await page.click('form button');
  await page.waitForFunction(
    (re) => new RegExp(re).test(document.querySelector('#verdict')?.textContent ?? ''),
    verdict.source,
    { timeout: 30_000 },
  );
  await page.waitForFunction(() => (document.querySelector('#coupon')?.textContent ?? '') !== '', null, {
    timeout: 30_000,
  });
  return {
    coupon: (await page.textContent('#coupon')) ?? '',
    verdict: (await page.textContent('#verdict')) ?? '',
    offline: await page.getAttribute('#coupon', 'data-offline'),
  };
}

const screenshots = fileURLToPath(new URL('../../test-results/consumers/', import.meta.url));

/** What the component shows, as a person reads it: its lines' boxes and texts, and each option's picker. */
async function screenOf(page: Page) {
  return page.evaluate(() => {
    const box = (selector: string) => {
      const r = document.querySelector(selector)!.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    };
    const lines = ['#sync', '#options', 'form', '#coupon', '#verdict'];
    return {
      sync: document.querySelector<HTMLElement>('#sync')!.innerText,
      boxes: Object.fromEntries(lines.map((s) => [s, box(s)])) as Record<
        string,
        { left: number; top: number; right: number; bottom: number }
      >,
      // the line each output stands on, label and all
      outputLines: ['#coupon', '#verdict'].map(
        (s) => (document.querySelector(s)!.parentElement as HTMLElement).innerText,
      ),
      options: [...document.querySelectorAll('#options label')].map((label) => ({
        label: (label.firstChild?.textContent ?? '').trim(),
        values: [...label.querySelectorAll('option')].map((o) => o.textContent),
        typed: label.querySelector('input') !== null,
      })),
    };
  });
}

/** The first sync that completes: the relay in the config answers "not ready" until its first listing is done. */
async function firstSync(page: Page, errors: string[]): Promise<void> {
  await expect
    .poll(async () => (await sync(page)).ok, {
      timeout: 60_000,
      interval: 500,
      message: `page errors: ${errors.join(' | ')}`,
    })
    .toBe(true);
}

describe('the quick start in a fresh Vite + React + TS app', { timeout: 300_000 }, () => {
  it("type-checks under strict: tsc -b (the template's build step) reports nothing", async () => {
    const { stdout } = await timed('tsc -b', () => app.run('node_modules/.bin/tsc', ['-b', '--pretty', 'false']));
    expect(stdout).toBe('');
    for (const project of ['tsconfig.app.json', 'tsconfig.node.json']) {
      expect(await readFile(join(app.dir, project), 'utf8'), project).toMatch(/"strict": true/);
    }
  });

  it("compiles the quick start's vite.config.ts and component with exactOptionalPropertyTypes on (process.env values are string | undefined)", async () => {
    for (const project of ['tsconfig.node.json', 'tsconfig.app.json']) {
      const { stdout } = await app
        .run('node_modules/.bin/tsc', ['-p', project, '--exactOptionalPropertyTypes', '--pretty', 'false'])
        .catch((error: { stdout?: string }) => ({ stdout: String(error.stdout) })); // tsc's errors are on stdout
      expect(stdout, project).toBe('');
    }
  });

  it('vite build exits and ships no server code', async () => {
    await timed('vite build', () =>
      app.run('node_modules/.bin/vite', ['build', '--logLevel', 'warn'], {
        env: MOCK_ENV as NodeJS.ProcessEnv,
        timeout: 120_000,
      }),
    );
    const dist = join(app.dir, 'dist');
    // nothing of Node (a browser build would stub it as __vite-browser-external), the relay or the mock server
    expect(await bundleText(dist)).not.toMatch(
      /__vite-browser-external|["'`]node:[a-z]+["'`]|\[shop-relay\]|RELAY NOT READY|__mock\/holds/,
    );
    // worker: { format: 'es' }: the worker's network and checkout code stay chunks of their own, loaded after it starts
    const assets = await readdir(join(dist, 'assets'));
    const worker = assets.find((f) => /^worker-[\w-]+\.js$/.test(f))!;
    const workerCode = await readFile(join(dist, 'assets', worker), 'utf8');
    // its entry imports nothing (WebKit runs an entry a second time when a chunk imports it: worker/worker.ts) and
    // loads the engine's chunk, which loads the rest
    expect(workerCode).not.toMatch(/\bfrom\s*[`"']|^import\s*[{*\w`"']/m);
    const engineChunk = workerCode.match(/import\(\s*[`"']\.\/(exposeEngine-[\w-]+\.js)/)?.[1];
    expect(engineChunk, 'the worker entry loads exposeEngine with import()').toBeTruthy();
    const engineCode = await readFile(join(dist, 'assets', engineChunk!), 'utf8');
    expect(engineCode).toMatch(/import\(\s*[`"']\.\/createNetwork-[\w-]+\.js/);
    expect(engineCode).toMatch(/import\(\s*[`"']\.\/checkoutChunk-[\w-]+\.js/);
    const firstLoad = workerCode.length + engineCode.length;
    console.log(
      `[consumers] the worker's first load: ${(firstLoad / 1000).toFixed(1)} kB (${worker} ${(workerCode.length / 1000).toFixed(1)} kB + ${engineChunk})`,
    );
  });

  it("precaches the engine once, the worker's: the README's define leaves the page's (worker: false's) out", async () => {
    // (after 'vite build': vite-plugin-pwa's service worker lists what it precaches, { url, revision } each)
    const dist = join(app.dir, 'dist');
    const sw = await readFile(join(dist, 'sw.js'), 'utf8');
    const urls = [...sw.matchAll(/\burl["']?\s*:\s*["']([^"']+)["']/g)].map((m) => m[1]!);
    const bytes = await Promise.all(urls.map(async (u) => (await readFile(join(dist, u))).length));
    const kib = bytes.reduce((a, b) => a + b, 0) / 1024;
    console.log(
      `[consumers] the README's app precaches ${urls.length} entries, ${kib.toFixed(0)} KiB: ${urls.join(', ')}`,
    );
    // each chunk once (`<chunk>-<package's hash>-<app's hash>.js`): a second copy is the page's in-thread engine's
    const chunks = urls.flatMap((u) => /^assets\/([A-Za-z]+)-[\w-]+\.js$/.exec(u)?.[1] ?? []);
    expect(chunks.filter((c, i) => chunks.indexOf(c) !== i)).toEqual([]);
    // the worker's copy: its entry's engine chunk, and the network and checkout chunks that one loads
    for (const chunk of ['exposeEngine', 'createNetwork', 'checkoutChunk']) expect(chunks).toContain(chunk);
    // the page's copy, which only `worker: false` loads, is not built at all (__SHOP_LOOKUP_IN_THREAD__: false)
    expect(chunks).not.toContain('createEngine');
  });

  it('dev server (npm run dev): the page answers the six lookups from the mock, and the component checks a coupon', async () => {
    await withEnv(MOCK_ENV, async () => {
      const server = await vite.createServer({
        root: app.dir,
        logLevel: 'warn',
        clearScreen: false,
        server: { port: 0, host: '127.0.0.1' },
      });
      const context = await browser.newContext();
      try {
        await server.listen();
        const { page, errors } = await open(
          context,
          `http://127.0.0.1:${(server.httpServer!.address() as { port: number }).port}/`,
        );
        await timed('dev run', async () => {
          await firstSync(page, errors);
          for (const [name, args] of SIX_LOOKUPS) expectFound(name, await confirmedAnswer(page, name, args), false);
          expect(await check(page, 'WELCOME10', /^Pay ₩22,500 \(checked online\)$/)).toMatchObject({
            offline: 'false',
          });
          await page.waitForFunction(() => document.querySelectorAll('#options option').length > 0, null, {
            timeout: 30_000,
          });
        });
        expect(errors).toEqual([]);
      } finally {
        await context.close();
        await server.close();
      }
    });
  });

  it('vite preview (npm run preview): the built page answers online and reads well; reloaded fully offline, it opens and answers from IndexedDB', async () => {
    await withEnv(MOCK_ENV, async () => {
      const server = await vite.preview({ root: app.dir, logLevel: 'warn', preview: { port: 0, host: '127.0.0.1' } });
      const url = `http://127.0.0.1:${(server.httpServer.address() as { port: number }).port}/`;
      const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
      try {
        const { page, errors } = await open(context, url);
        await timed('preview run', async () => {
          await firstSync(page, errors);
          for (const [name, args] of SIX_LOOKUPS) expectFound(name, await confirmedAnswer(page, name, args), false);
          const online = await check(page, 'WELCOME10', /checked online/);
          expect(online.coupon).not.toBe('Unknown coupon');

          // the screen: each output on a line of its own with its label, amounts in won, each option's values
          await page.waitForFunction(() => document.querySelectorAll('#options option').length > 0, null, {
            timeout: 30_000,
          });
          await mkdir(screenshots, { recursive: true });
          await page.screenshot({ path: `${screenshots}newcomer-online.png`, fullPage: true });
          // (soft: every wrong thing on the screen is reported at once)
          const screen = await screenOf(page);
          expect.soft(screen.sync, "the sync state in words (not the engine's phase name)").toMatch(/^synced \d/);
          expect.soft(overlapping(screen.boxes)).toEqual([]);
          expect
            .soft(
              stackedInOrder(Object.values(screen.boxes) as Box[]),
              `lines of their own: ${JSON.stringify(screen.boxes)}`,
            )
            .toBe(true);
          expect.soft(screen.outputLines).toEqual([`Coupon: ${online.coupon}`, 'Result: Pay ₩22,500 (checked online)']);
          expect.soft(screen.options).toEqual([
            { label: '색상', values: ['블랙', '화이트', '네이비'], typed: false },
            { label: '사이즈', values: ['S', 'M', 'L'], typed: false },
            { label: '각인 문구', values: [], typed: true },
          ]);

          // Reload offline: once a service worker controls the page (its files cached), the browser goes fully
          // offline and reloads
          await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
          // every request of the page's own files fails offline unless the app shell has it: the template's images
          // (imported, and in public/) included; the API's are the engine's and fail by design
          const failed: string[] = [];
          const pageOrigin = new URL(url).origin;
          page.on('requestfailed', (r) => {
            const at = new URL(r.url());
            if (at.origin === pageOrigin && !at.pathname.startsWith('/shop-api')) failed.push(at.pathname);
          });
          await context.setOffline(true);
          await page.reload();
          await page.waitForFunction(() => 'consumerTest' in window, null, { timeout: 60_000 });
          await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: 30_000 });
          expect(
            await page.evaluate(() => navigator.serviceWorker.controller !== null),
            'the page came from its service worker',
          ).toBe(true);
          for (const [name, args] of SIX_LOOKUPS) expectFound(name, await settle(page, name, args, true), true);
          const offline = await check(page, 'WELCOME10', /checked offline/);
          expect(offline).toMatchObject({ coupon: `${online.coupon} (offline copy)`, offline: 'true' });
          await page.waitForFunction(() => /^offline/.test(document.querySelector('#sync')?.textContent ?? ''), null, {
            timeout: 30_000,
          });
          await page.screenshot({ path: `${screenshots}newcomer-offline.png`, fullPage: true });
          expect(failed, 'requests of the page that failed after the offline reload').toEqual([]);
          expect(
            await page.evaluate(() => [...document.images].filter((i) => i.naturalWidth === 0).map((i) => i.src)),
            'images that did not load offline',
          ).toEqual([]);
          // the API's answers are the engine's: no cache holds one, and none answers for the network
          const cached = await page.evaluate(async () => {
            const urls: string[] = [];
            for (const name of await caches.keys())
              for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
            return urls;
          });
          expect(cached.filter((path) => path.startsWith('/shop-api'))).toEqual([]);
          expect(
            await page.evaluate(() =>
              fetch('/shop-api/v2/shop/coupons').then(
                () => 'answered',
                () => 'failed',
              ),
            ),
          ).toBe('failed');
        });
        expect(errors).toEqual([]);
      } finally {
        await context.close();
        await server.close();
      }
    });
  });

  it('started while the shop API was down, the page syncs by itself once it is up (no reload, no sync call)', async () => {
    const { startMockShopApi } = await app.importDep<{ startMockShopApi(): Promise<MockShopApi> }>(
      '@shop-lookup/mock-server',
    );
    const mock = await startMockShopApi();
    mock.setDown(true);
    // the quick start's config with a key: its relay lists this API, which is down as the server and the page start
    const env = { SHOP_API_KEY: 'demo-key', SHOP_API_SECRET: 'demo-secret', SHOP_API_TARGET: mock.url };
    await withEnv(env, async () => {
      const server = await vite.preview({ root: app.dir, logLevel: 'warn', preview: { port: 0, host: '127.0.0.1' } });
      const context = await browser.newContext();
      try {
        const { page, errors } = await open(
          context,
          `http://127.0.0.1:${(server.httpServer.address() as { port: number }).port}/`,
        );
        const down = await sync(page);
        expect(down.ok).toBe(false);
        expect(['relay_not_ready', 'network_error']).toContain(down.errors[0]?.code);
        expect(await page.locator('#options option').count()).toBe(0);

        mock.setDown(false);
        await timed('synced after the API came up', async () => {
          // the component's status line: "synced 10:42:07" once the coupons arrived
          await page.waitForFunction(() => /synced/.test(document.querySelector('#sync')?.textContent ?? ''), null, {
            timeout: 120_000,
          });
        });
        for (const [name, args] of SIX_LOOKUPS) expectFound(name, await confirmedAnswer(page, name, args), false);
        expect(await check(page, 'WELCOME10', /^Pay ₩[\d,]+ /)).toMatchObject({ offline: 'false' });
        expect(errors).toEqual([]);
      } finally {
        await context.close();
        await server.close();
        await mock.close();
      }
    });
  });
});

/** A free TCP port on this machine (the README's fixed ports would collide with other runs). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One line of the README run by `sh -c` in the app, in a process group of its own; its output kept. */
function runLine(dir: string, line: string, env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn('sh', ['-c', line], {
    cwd: dir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += String(c)));
  child.stderr!.on('data', (c) => (output += String(c)));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    output: () => output,
    exited,
    /** Waits until the output matches, or the process ends first (then fails, with its output). */
    async waitFor(pattern: RegExp, what: string): Promise<void> {
      await expect
        .poll(() => pattern.test(output) || child.exitCode !== null, { timeout: 90_000, interval: 100, message: what })
        .toBe(true);
      if (!pattern.test(output)) throw new Error(`${what}: the line ended (${child.exitCode}): ${output}`);
    },
    /** Ends the line's whole process group (npm, sh, vite; the relay itself), as Ctrl-C in its terminal would. */
    async stop(): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return; // gone already
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    },
  };
}

describe("the README's relay lines, as written, in this app", { timeout: 300_000 }, () => {
  it("a mock, a relay, a till's token and the app on another origin: the till syncs from the relay and checks a coupon; nothing is refused", async () => {
    // the block's first paragraph, without `npm install` (the quick start's step 1 installed both server packages already)
    const block = await readmeExample('run the relay', 'README.md');
    const lines = block
      .split('\n\n')[0]!
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('npm install'));
    const [mockLine, relayLine, tokenLine, pageLine] = lines as [string, string, string, string];
    expect(lines).toHaveLength(4);
    expect(mockLine).toMatch(/shop-lookup-mock/);
    expect(tokenLine).toMatch(/shop-lookup-relay token/);
    // as written, but on free ports (another run may hold 8787, 8788 or 5173): each port the lines name is swapped,
    // the servers are told theirs with PORT (the lines rely on the defaults), and Vite its own with --port
    const [mockPort, relayPort, pagePort] = [await freePort(), await freePort(), await freePort()];
    const swap = (line: string) =>
      line
        .replaceAll(':8787', `:${mockPort}`)
        .replaceAll(':8788', `:${relayPort}`)
        .replaceAll(':5173', `:${pagePort}`)
        .replace(/\s*&?\s*(#.*)?$/, ''); // the trailing `&` and comment: each line is a process of its own here
    const env = { PATH: process.env.PATH, HOME: process.env.HOME };
    // the app's lookup is the quick start's "a till on another origin" one
    const component = join(app.dir, 'src/CouponCheck.tsx');
    const original = await readFile(component, 'utf8');
    const onAnotherOrigin = await readmeExample('CouponCheck.tsx, a till on another origin', QUICK_START);
    expect(original).toMatch(/^export const lookup = .*$/m);
    await writeFile(component, original.replace(/^export const lookup = .*$/m, onAnotherOrigin.trim()));

    // the two servers as the README's relay section says to start one: the command itself, `exec`ed by the shell
    // (so the signal reaches it, and its exit code is the line's)
    const exec = (line: string) => line.replace(/^((?:\w+=\S+\s+)*)/, '$1exec ');
    const mock = runLine(app.dir, exec(swap(mockLine)), { ...env, PORT: String(mockPort) });
    const relay = runLine(app.dir, exec(swap(relayLine)), { ...env, PORT: String(relayPort) });
    let page: ReturnType<typeof runLine> | undefined;
    const context = await browser.newContext();
    try {
      await mock.waitFor(/mock shop API on http:\/\/127\.0\.0\.1:\d+/, 'the mock command printed its URL');
      expect(mock.output()).toMatch(/key demo-key, secret demo-secret/);
      expect(mock.output()).toMatch(/WELCOME10 +coupon: /);
      await relay.waitFor(/"msg":"listening"/, 'the relay command listens');
      const token = runLine(app.dir, swap(tokenLine), env);
      expect(await token.exited, token.output()).toBe(0);
      expect(token.output()).toMatch(/^till front-1 of shop my-shop, valid until /m);
      page = runLine(app.dir, `${swap(pageLine)} -- --port ${pagePort} --strictPort`, env);
      await page.waitFor(new RegExp(`localhost:${pagePort}`), 'the app serves its page');

      const { page: tab, errors } = await open(context, `http://localhost:${pagePort}/`);
      await timed('relay lines run', async () => {
        await firstSync(tab, errors);
        const status = (await tab.evaluate(() => (window as any).consumerTest.status())) as {
          source?: string;
          lastError: unknown;
        };
        expect(status).toMatchObject({ source: 'relay', lastError: null });
        expect(await check(tab, 'WELCOME10', /^Pay ₩22,500 \(checked online\)$/)).toMatchObject({ offline: 'false' });
      });
      expect(errors).toEqual([]);
      // the relay refused nothing and named no stranger origin: the lines agree on SHOP_ID and CORS_ORIGINS
      expect(relay.output()).not.toMatch(/"msg":"refused"|origin not in CORS_ORIGINS/);
      expect(relay.output()).toMatch(/"route":"feed","status":200/);
    } finally {
      await context.close();
      await page?.stop();
      await relay.stop();
      await mock.stop();
      await writeFile(component, original);
      await rm(join(app.dir, 'till-token.txt'), { force: true });
    }
    // both commands stop cleanly on SIGTERM
    expect(await mock.exited, mock.output()).toBe(0);
    expect(await relay.exited, relay.output()).toBe(0);
    expect(relay.output()).toMatch(/"msg":"stopped"/);
  });
});
