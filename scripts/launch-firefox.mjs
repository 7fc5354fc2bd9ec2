// The one way tests and the bench start Firefox: Debian's Firefox ESR (FIREFOX_PATH, or /usr/bin/firefox-esr, made
// sure of by ensure-engines.mjs), headless, driven over WebDriver BiDi by puppeteer-core (which downloads nothing).
import puppeteer from 'puppeteer-core';

export const FIREFOX_PATH = process.env.FIREFOX_PATH || '/usr/bin/firefox-esr';

/**
 * `storageLimitBytes`: the quota manager's whole temporary storage set that low (an origin's group limit is the
 * same figure while it is under 10 MB), in the fresh profile puppeteer makes for each launch.
 * @example const browser = await launchFirefox(); const page = await (await browser.createBrowserContext()).newPage();
 */
export function launchFirefox({ storageLimitBytes } = {}) {
  const prefs = storageLimitBytes
    ? { 'dom.quotaManager.temporaryStorage.fixedLimit': Math.floor(storageLimitBytes / 1024) }
    : {};
  return puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_PATH,
    headless: true,
    protocol: 'webDriverBiDi',
    extraPrefsFirefox: prefs,
    timeout: 60_000,
    protocolTimeout: 120_000,
  });
}
