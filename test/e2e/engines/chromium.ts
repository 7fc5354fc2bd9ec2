// Chromium through playwright-core (scripts/launch-chromium.mjs): a context per device; a storage limit is the
// origin's quota overridden over CDP before the page first goes there.
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../../scripts/launch-chromium.mjs';
import { logPageError, VIEWPORT, type Engine, type EngineContext, type EngineOptions, type EnginePage } from './engine';

function chromiumPage(page: Page, context: BrowserContext, options: EngineOptions): EnginePage {
  page.on('pageerror', (e) => logPageError('chromium', String(e)));
  const limited = new Set<string>();
  return {
    async goto(url) {
      const origin = new URL(url).origin;
      if (options.storageLimitBytes && !limited.has(origin)) {
        const cdp = await context.newCDPSession(page);
        await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: options.storageLimitBytes });
        limited.add(origin);
      }
      await page.goto(url);
    },
    reload: () => page.reload().then(() => undefined),
    evaluate: (fn, arg) => page.evaluate(fn as never, arg as never) as never,
    screenshot: (path) => page.screenshot({ path, fullPage: true }).then(() => undefined),
    close: () => page.close(),
  };
}

/** @example const engine = await launchChromiumEngine(); const page = await (await engine.newContext()).newPage(); */
export async function launchChromiumEngine(options: EngineOptions = {}): Promise<Engine> {
  const browser = await launchChromium();
  return {
    name: 'chromium',
    version: `Chromium ${browser.version()}`,
    async newContext(): Promise<EngineContext> {
      const context = await browser.newContext({ viewport: VIEWPORT });
      context.setDefaultTimeout(60_000);
      return {
        newPage: async () => chromiumPage(await context.newPage(), context, options),
        close: () => context.close().catch(() => undefined),
      };
    },
    close: () => browser.close().catch(() => undefined),
  };
}
