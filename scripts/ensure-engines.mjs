#!/usr/bin/env node
// Makes sure the end-to-end tests have Firefox and WebKit to drive, as ensure-chromium.mjs does for Chromium:
// Debian's Firefox ESR (firefox-esr, over WebDriver BiDi) and WebKitGTK's WebKitWebDriver with its MiniBrowser
// (webkit2gtk-driver, under xvfb-run from xvfb and xauth), plus the Python bindings of WebKitGTK (python3-gi,
// gir1.2-webkit2-4.1) for the storage tests' WebKit shell (scripts/webkit-profile-shell.py). Installed with apt-get
// when missing (as root, or through sudo); exit code 1, with what to install, when they cannot be.
import { spawnSync } from 'node:child_process';
import { aptInstall, executable, has } from './system-packages.mjs';
import { FIREFOX_PATH } from './launch-firefox.mjs';
import { MINIBROWSER_PATH, WEBKIT_DRIVER_PATH } from './launch-webkit.mjs';

const webkitShellWorks = () =>
  spawnSync(
    '/usr/bin/python3',
    [
      '-c',
      "import gi; gi.require_version('Gtk', '3.0'); gi.require_version('WebKit2', '4.1'); from gi.repository import Gtk, WebKit2",
    ],
    { stdio: 'ignore' },
  ).status === 0;

/** What each engine needs, the check, and the Debian packages that bring it. */
const ALL = [
  {
    engine: 'firefox',
    what: `Firefox ESR at ${FIREFOX_PATH} (or FIREFOX_PATH)`,
    ok: () => executable(FIREFOX_PATH),
    packages: ['firefox-esr'],
  },
  {
    engine: 'webkit',
    what: `WebKitWebDriver at ${WEBKIT_DRIVER_PATH} and MiniBrowser at ${MINIBROWSER_PATH}`,
    ok: () => executable(WEBKIT_DRIVER_PATH) && executable(MINIBROWSER_PATH),
    packages: ['webkit2gtk-driver'],
  },
  {
    engine: 'webkit',
    what: 'xvfb-run and xauth (a display for WebKit)',
    ok: () => has('xvfb-run') && has('xauth'),
    packages: ['xvfb', 'xauth'],
  },
  {
    engine: 'webkit',
    what: "WebKitGTK's Python bindings (the storage tests' WebKit shell)",
    ok: webkitShellWorks,
    packages: ['python3-gi', 'gir1.2-webkit2-4.1'],
  },
];
// E2E_ENGINES=chromium,webkit runs the browser tests on those engines only (all three when unset)
const asked = (process.env.E2E_ENGINES ?? '')
  .split(',')
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);
const NEEDS = ALL.filter((n) => asked.length === 0 || asked.includes(n.engine));

const missing = NEEDS.filter((n) => !n.ok());
if (missing.length > 0) {
  const packages = missing.flatMap((n) => n.packages);
  console.log(
    `ensure-engines: missing ${missing.map((n) => n.what).join('; ')}; installing ${packages.join(' ')} (a few minutes)…`,
  );
  aptInstall(packages, { label: 'ensure-engines' });
  const still = NEEDS.filter((n) => !n.ok());
  if (still.length > 0) {
    console.error(
      [
        `ensure-engines: the end-to-end tests run on Firefox and WebKit too, and still miss: ${still.map((n) => n.what).join('; ')}.`,
        'Install them as root, then run the tests again:',
        `  apt-get update && apt-get install -y --no-install-recommends ${still.flatMap((n) => n.packages).join(' ')}`,
        'or set E2E_ENGINES=chromium to run the browser tests on Chromium only (CI runs all three).',
      ].join('\n'),
    );
    process.exit(1);
  }
}
