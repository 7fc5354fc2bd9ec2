// Firefox ESR through puppeteer-core over WebDriver BiDi (scripts/launch-firefox.mjs): a browser context (a BiDi
// user context) per device; a storage limit is set for the whole browser when it starts.
import { writeFile } from 'node:fs/promises';
import type { Page } from 'puppeteer-core';
import { launchFirefox } from '../../../scripts/launch-firefox.mjs';
import { logPageError, VIEWPORT, type Engine, type EngineContext, type EngineOptions, type EnginePage } from './engine';

function firefoxPage(page: Page): EnginePage {
  page.on('pageerror', (e) => logPageError('firefox', String(e)));
  return {
    goto: (url) => page.goto(url, { waitUntil: 'load', timeout: 60_000 }).then(() => undefined),
    reload: () => page.reload({ waitUntil: 'load', timeout: 60_000 }).then(() => undefined),
    evaluate: (fn, arg) => page.evaluate(fn as never, arg as never) as never,
    screenshot: async (path) => writeFile(path, await page.screenshot({ fullPage: true })),
    close: () => page.close(),
  };
}

/** @example const engine = await launchFirefoxEngine(); */
export async function launchFirefoxEngine(options: EngineOptions = {}): Promise<Engine> {
  const browser = await launchFirefox(options);
  return {
    name: 'firefox',
    version: `Firefox ${(await browser.version()).replace(/^firefox\//, '')}`,
    async newContext(): Promise<EngineContext> {
      const context = await browser.createBrowserContext();
      return {
        async newPage() {
          const page = await context.newPage();
          await page.setViewport(VIEWPORT);
          page.setDefaultTimeout(60_000);
          return firefoxPage(page);
        },
        close: () => context.close().catch(() => undefined),
      };
    },
    close: () => browser.close().catch(() => undefined),
  };
}
