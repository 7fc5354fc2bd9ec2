#!/usr/bin/env node
// Makes sure the end-to-end tests have a Chromium to drive (playwright-core cannot download browsers here):
// CHROMIUM_PATH, or Debian's /usr/bin/chromium, installed with apt-get when missing (as root, or through sudo).
// Also adds a Korean font when none is installed, so screenshots show Korean text instead of empty boxes.
// Exit code 1, with what to install, when Chromium is missing and cannot be installed.
import { accessSync, constants } from 'node:fs';
import { spawnSync } from 'node:child_process';

const DEFAULT_PATH = '/usr/bin/chromium';
const PACKAGES = ['chromium'];
const FONT_PACKAGE = 'fonts-nanum';

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Runs `apt-get update && apt-get install -y <packages>` as root or through sudo; false when it cannot. */
function aptInstall(packages, { quiet = false } = {}) {
  if (!has('apt-get')) return false;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const prefix = isRoot ? '' : has('sudo') ? 'sudo ' : null;
  if (prefix === null) return false;
  const script = `${prefix}apt-get update && ${prefix}env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  if (!quiet) console.log(`ensure-chromium: ${script}`);
  return spawnSync('sh', ['-c', script], { stdio: quiet ? 'ignore' : 'inherit' }).status === 0;
}

function koreanFontInstalled() {
  if (!has('fc-list')) return true; // cannot tell: do not touch the system
  const out = spawnSync('fc-list', [':lang=ko', 'family'], { encoding: 'utf8' });
  return out.status === 0 && out.stdout.trim() !== '';
}

const custom = process.env.CHROMIUM_PATH;
if (custom) {
  if (executable(custom)) process.exit(0);
  console.error(`ensure-chromium: CHROMIUM_PATH=${custom} is not an executable file. Point it at a Chromium binary, or unset it to use ${DEFAULT_PATH}.`);
  process.exit(1);
}

if (!executable(DEFAULT_PATH)) {
  console.log(`ensure-chromium: ${DEFAULT_PATH} is missing; installing Chromium (a few minutes)…`);
  const installed = aptInstall([...PACKAGES, FONT_PACKAGE]) && executable(DEFAULT_PATH);
  if (!installed) {
    console.error(
      [
        `ensure-chromium: the end-to-end tests need Chromium at ${DEFAULT_PATH} (or a path in CHROMIUM_PATH).`,
        'Install it as root, then run the tests again:',
        `  apt-get update && apt-get install -y ${PACKAGES.join(' ')} ${FONT_PACKAGE}`,
        'or point CHROMIUM_PATH at an existing Chromium / Chrome binary.',
      ].join('\n'),
    );
    process.exit(1);
  }
}

if (!koreanFontInstalled() && !aptInstall([FONT_PACKAGE], { quiet: true })) {
  console.warn(`ensure-chromium: no Korean font installed; screenshots will show boxes for Korean text (apt-get install -y ${FONT_PACKAGE}).`);
}
