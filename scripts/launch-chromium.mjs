// The one way tests and the bench start Chromium: the binary ensure-chromium.mjs made sure of (CHROMIUM_PATH, or
// Debian's /usr/bin/chromium), headless, through playwright-core (which cannot download browsers here).
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** @example const browser = await launchChromium(); */
export function launchChromium() {
  const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 60_000 });
}
