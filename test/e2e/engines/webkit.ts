// WebKit (WebKitGTK) through WebKitWebDriver over W3C WebDriver (scripts/launch-webkit.mjs): one WebDriver session
// per device (its own browser process and storage), a window per tab. A WebKitWebDriver serves one session at a
// time, so a second device at once gets a driver of its own (started when first needed, kept for the next).
import { writeFile } from 'node:fs/promises';
import { startWebKitDriver, type WebKitDriver } from '../../../scripts/launch-webkit.mjs';
import type { WebDriverSession } from '../../../scripts/webdriver.mjs';
import { VIEWPORT, type Engine, type EngineContext, type EngineOptions, type EnginePage } from './engine';

/** Longer than any wait a test runs in the page (harness WAIT_MS) */
const SCRIPT_TIMEOUT_MS = 120_000;

function webkitPage(session: WebDriverSession, window: string, closed: () => void): EnginePage {
  const inWindow = <T>(fn: () => Promise<T>) => session.inWindow(window, fn);
  return {
    goto: (url) => inWindow(() => session.navigate(url)).then(() => undefined),
    reload: () => inWindow(() => session.refresh()).then(() => undefined),
    evaluate: (fn, arg) => inWindow(() => session.execute(fn.toString(), arg)),
    async screenshot(path) {
      // WebKitGTK's WebDriver captures the last painted frame: let the page paint what it shows now first
      const painted = (() =>
        new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))).toString();
      const png = await inWindow(async () => {
        await session.execute(`() => Promise.race([(${painted})(), new Promise((r) => setTimeout(r, 500))])`);
        return session.screenshot();
      });
      await writeFile(path, png);
    },
    async close() {
      await inWindow(() => session.closeWindow());
      closed();
    },
  };
}

/** @example const engine = await launchWebKitEngine(); */
export async function launchWebKitEngine(options: EngineOptions = {}): Promise<Engine> {
  const drivers: WebKitDriver[] = [await startWebKitDriver()];
  const idle = [...drivers];
  const takeDriver = async () => idle.pop() ?? drivers[drivers.push(await startWebKitDriver()) - 1]!;
  return {
    name: 'webkit',
    version: 'WebKitGTK (MiniBrowser)',
    async newContext(): Promise<EngineContext> {
      const driver = await takeDriver();
      let session: WebDriverSession;
      try {
        session = await driver.newSession({ storageLimitBytes: options.storageLimitBytes });
      } catch (error) {
        idle.push(driver);
        throw error;
      }
      await session.setTimeouts({ script: SCRIPT_TIMEOUT_MS, pageLoad: 60_000 });
      const first = await session.currentWindow();
      let firstUsed = false;
      const open = new Set<string>();
      let done = false;
      return {
        async newPage() {
          const window = firstUsed ? await session.newWindow() : first;
          firstUsed = true;
          open.add(window);
          await session.inWindow(window, () => session.setWindowRect(VIEWPORT));
          return webkitPage(session, window, () => open.delete(window));
        },
        async close() {
          if (done) return;
          done = true;
          await session.close();
          idle.push(driver);
        },
      };
    },
    async close() {
      await Promise.all(drivers.map((d) => d.close()));
    },
  };
}
