#!/usr/bin/env node
// Makes sure the end-to-end tests have a Chromium to drive (playwright-core cannot download browsers here):
// CHROMIUM_PATH, or Debian's /usr/bin/chromium, installed with apt-get when missing (as root, or through sudo).
// Also adds a Korean font when none is installed, so screenshots show Korean text instead of empty boxes.
// Exit code 1, with what to install, when Chromium is missing and cannot be installed.
import { spawnSync } from 'node:child_process';
import { aptInstall as aptInstallAs, executable, has } from './system-packages.mjs';

const DEFAULT_PATH = '/usr/bin/chromium';
const PACKAGES = ['chromium'];
const FONT_PACKAGE = 'fonts-nanum';
const aptInstall = (packages, options = {}) => aptInstallAs(packages, { label: 'ensure-chromium', ...options });

function koreanFontInstalled() {
  if (!has('fc-list')) return true; // cannot tell: do not touch the system
  const out = spawnSync('fc-list', [':lang=ko', 'family'], { encoding: 'utf8' });
  return out.status === 0 && out.stdout.trim() !== '';
}

const custom = process.env.CHROMIUM_PATH;
if (custom) {
  if (executable(custom)) process.exit(0);
  console.error(
    `ensure-chromium: CHROMIUM_PATH=${custom} is not an executable file. Point it at a Chromium binary, or unset it to use ${DEFAULT_PATH}.`,
  );
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
  console.warn(
    `ensure-chromium: no Korean font installed; screenshots will show boxes for Korean text (apt-get install -y ${FONT_PACKAGE}).`,
  );
}
