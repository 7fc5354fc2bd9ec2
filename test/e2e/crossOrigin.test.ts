// A till on another origin than its relay, in the browser: a page of its own (test/e2e/crossOriginTill/, built
// with vite-plugin-pwa as docs/embedding.md's "Reload offline" says, served by `vite preview`) on one origin, the
// relay command (packages/relay's bin, from its source) on another, with CORS_ORIGINS naming the page's origin and a
// till tokens file. The till's engine (its worker) sends the token across origins; a wrong one is `forbidden`, never
// offline, and the till signed in again goes on with its new token (asked again after the 401); the till syncs from
// the relay's feed, then reloads with no network at all and answers from IndexedDB. Each origin is reached through a
// network cut of its own (networkCut.ts), so "no network" is the same on every engine: it runs on all three.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, preview, type PreviewServer } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_CODES, startMockShopApi, type MockShopApi } from '../../packages/mock-server/src';
import type { CouponVerdict, SyncReport, SyncStatus } from '../../packages/shop-lookup/src';
import { startRelayBin, type RelayBinProcess } from '@shop-lookup/test-kit/relayBin';
import { enginesOfRun, laneKey, launchEngine, type Engine, type EngineContext, type EnginePage } from './engines';
import { startNetworkCut, type NetworkCut } from './networkCut';
import { waitForPage, WAIT_MS } from './page';

const PAGE_ROOT = fileURLToPath(new URL('./crossOriginTill/', import.meta.url));
const SHOP_LOOKUP = fileURLToPath(new URL('../../packages/shop-lookup/src/index.ts', import.meta.url));
const GOOD = 'till-token-front-1-cross-origin-5e6f';
const WRONG = 'till-token-nobody-knows-0000';

/** The page built as production builds it: the worker split into chunks, its app shell precached by Workbox. */
async function buildTillPage(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: PAGE_ROOT,
    logLevel: 'warn',
    cacheDir: fileURLToPath(new URL(`../../node_modules/.vite/cross-origin-${laneKey()}`, import.meta.url)),
    resolve: { alias: [{ find: /^shop-lookup$/, replacement: SHOP_LOOKUP }] },
    worker: { format: 'es' },
    build: { outDir, emptyOutDir: true, sourcemap: false, target: 'es2022' },
    plugins: [
      VitePWA({
        injectRegister: false,
        registerType: 'autoUpdate',
        manifest: false,
        // the page's files only: the relay is another origin, its answers are the engine's
        workbox: {
          globPatterns: ['**/*.{js,css,html}'],
          navigateFallback: null,
          clientsClaim: true,
          skipWaiting: true,
        },
      }),
    ],
  });
}

for (const engineName of enginesOfRun()) {
  // (WebKit's tests get one more try, as e2eSuite gives them: its WebDriver once left a command unanswered)
  describe(`a till on another origin than its relay [${engineName}]`, {
    timeout: 180_000,
    retry: engineName === 'webkit' ? 1 : 0,
  }, () => {
    let mock: MockShopApi;
    let dir: string;
    let server: PreviewServer;
    let pageNet: NetworkCut;
    let relay: RelayBinProcess;
    let relayNet: NetworkCut;
    let engine: Engine;
    let context: EngineContext;
    let page: EnginePage;
    let pageOrigin: string;
    let relayUrl: string;
    /** The same page on an origin the relay does not list (another port in front of the same server). */
    let unlistedNet: NetworkCut;
    let unlistedOrigin: string;

    beforeAll(async () => {
      mock = await startMockShopApi({ rateLimits: false });
      dir = await mkdtemp(join(tmpdir(), 'shop-lookup-cross-origin-'));
      const outDir = join(dir, 'dist');
      await buildTillPage(outDir);
      server = await preview({
        configFile: false,
        root: PAGE_ROOT,
        logLevel: 'warn',
        build: { outDir },
        preview: { port: 0, host: '127.0.0.1' },
      });
      pageNet = await startNetworkCut((server.httpServer.address() as { port: number }).port);
      pageOrigin = `http://127.0.0.1:${pageNet.port}`;
      unlistedNet = await startNetworkCut((server.httpServer.address() as { port: number }).port);
      unlistedOrigin = `http://127.0.0.1:${unlistedNet.port}`;
      const tokens = join(dir, 'tills.txt');
      await writeFile(tokens, `front-1 ${GOOD}\n`);
      relay = await startRelayBin({
        SHOP_API_KEY: 'demo-key',
        SHOP_API_SECRET: 'demo-secret',
        SHOP_API_TARGET: mock.url,
        SHOP_API_RATE_LIMITS: 'off',
        SHOP_ID: 'cross-origin-shop',
        BASE_PATH: '/shop-api',
        TILL_TOKENS_FILE: tokens,
        // (operators need their token: a page on this machine's loopback is a till like any other)
        OPS_TOKEN: 'ops-token-cross-origin-0123',
        CORS_ORIGINS: pageOrigin,
      });
      relayNet = await startNetworkCut(relay.port);
      relayUrl = `http://127.0.0.1:${relayNet.port}/shop-api`;
      engine = await launchEngine(engineName);
      context = await engine.newContext();
      page = await context.newPage();
      await page.goto(`${pageOrigin}/`);
    }, 240_000);

    afterAll(async () => {
      pageNet?.restore();
      relayNet?.restore();
      await context?.close();
      await engine?.close();
      await relayNet?.close();
      await relay?.kill();
      await unlistedNet?.close();
      await pageNet?.close();
      await server?.close();
      await mock?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 60_000);

    const sync = () => page.evaluate(() => window.till.sync()) as Promise<SyncReport>;
    const status = () => page.evaluate(() => window.till.status()) as Promise<SyncStatus>;
    const validate = (code: string) =>
      page.evaluate((c) => window.till.validate(c, 32_000), code) as Promise<CouponVerdict>;
    const signIn = (token: string) => page.evaluate((t) => localStorage.setItem('till-token', t), token);

    it('shows a wrong token as forbidden (not offline), then syncs from the relay once the till is signed in', async () => {
      await page.evaluate(
        ({ url, token }) => {
          localStorage.setItem('relay', url);
          localStorage.setItem('till-token', token);
          window.till.open();
        },
        { url: relayUrl, token: WRONG },
      );

      const refused = await sync();
      expect(refused.ok).toBe(false);
      expect(refused.errors.map((e) => e.code)).toEqual(['forbidden']);
      const seen = await status();
      expect(seen).toMatchObject({ online: true, lastError: { code: 'forbidden' } });
      expect(seen.phase).not.toBe('offline');
      const unchecked = await validate(MOCK_CODES.welcomeCoupon);
      expect(unchecked).toMatchObject({ ok: false, reason: 'unchecked', detail: { error: { code: 'forbidden' } } });

      // signed in: the next refused request asks the page again and goes on with the new token
      await signIn(GOOD);
      expect(await sync()).toMatchObject({ ok: true, errors: [] });
      await waitForPage(
        page,
        'the till synced from the relay',
        () =>
          window.till
            .status()
            .then((s) => s.lastError === null && s.source === 'relay' && s.lastSyncedAt.coupons !== null),
        undefined,
      );
      expect(await validate(MOCK_CODES.welcomeCoupon)).toMatchObject({ ok: true });
    });

    it('reloaded with no network at all, opens from its app shell and answers from IndexedDB', async () => {
      await waitForPage(
        page,
        'the app shell controls the page',
        () => navigator.serviceWorker.controller !== null,
        undefined,
      );
      pageNet.cut();
      relayNet.cut();
      try {
        await page.reload();
        await waitForPage(page, 'the page opened from its app shell', () => 'till' in window, undefined);
        await page.evaluate(() => window.till.open());
        const verdict = await validate(MOCK_CODES.welcomeCoupon);
        expect(verdict).toMatchObject({ ok: true, source: 'local' });
        await waitForPage(
          page,
          'the till shows offline',
          () => window.till.status().then((s) => !s.online),
          undefined,
          WAIT_MS,
        );
      } finally {
        pageNet.restore();
        relayNet.restore();
      }
    });

    /** A till page of its own context at `origin`, its relay at `baseUrl`, signed in, synced once. */
    async function tillAt(origin: string, baseUrl: string) {
      const ctx = await engine.newContext();
      const p = await ctx.newPage();
      await p.goto(`${origin}/`);
      await p.evaluate(
        ({ url, token }) => {
          localStorage.setItem('relay', url);
          localStorage.setItem('till-token', token);
          window.till.open();
        },
        { url: baseUrl, token: GOOD },
      );
      const report = (await p.evaluate(() => window.till.sync())) as SyncReport;
      const seen = (await p.evaluate(() => window.till.status())) as SyncStatus;
      return { ctx, report, seen };
    }

    it('a page of an origin the relay does not list: network_error names the whole baseUrl and CORS_ORIGINS, and the relay warns naming the origin', async () => {
      const { ctx, report } = await tillAt(unlistedOrigin, relayUrl);
      try {
        expect(report.ok).toBe(false);
        expect(report.errors[0]?.code).toBe('network_error');
        const message = report.errors[0]!.message;
        expect(message).toContain(`Could not reach the shop API at ${relayUrl} (`);
        expect(message).toContain(`its relay must list ${unlistedOrigin} in CORS_ORIGINS`);
        const warned = () =>
          relay
            .logs()
            .filter((l) => l.level === 'warn' && /^origin not in CORS_ORIGINS/.test(String(l.msg)))
            .map((l) => l.origin);
        await expect.poll(warned, { timeout: WAIT_MS }).toContain(unlistedOrigin);
        expect(warned()).not.toContain(pageOrigin);
      } finally {
        await ctx.close();
      }
    });

    it('a baseUrl whose path the relay does not serve, from a listed origin: unsupported naming that baseUrl, never offline', async () => {
      const wrongBase = relayUrl.replace(/\/shop-api$/, '/shop-apii');
      const { ctx, report, seen } = await tillAt(pageOrigin, wrongBase);
      try {
        expect(report.ok).toBe(false);
        expect(report.errors.map((e) => e.code)).toEqual(['unsupported']);
        expect(report.errors[0]!.message).toMatch(
          new RegExp(
            `^Nothing at ${wrongBase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} answers as the shop API: .*Check baseUrl`,
          ),
        );
        expect(seen.online).toBe(true);
        expect(seen.phase).not.toBe('offline');
      } finally {
        await ctx.close();
      }
    });
  });
}
