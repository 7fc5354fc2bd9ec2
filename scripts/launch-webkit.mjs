// The one way tests and the bench start WebKit: Debian's WebKitWebDriver (webkit2gtk-driver) under xvfb-run (its
// browsers need a display; they have no headless mode), driven over W3C WebDriver by scripts/webdriver.mjs. One
// WebKitWebDriver serves one session (one browser process, its own ephemeral storage) at a time.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { newSession, waitForDriver } from './webdriver.mjs';

export const WEBKIT_DRIVER_PATH = process.env.WEBKIT_DRIVER_PATH || '/usr/bin/WebKitWebDriver';
/** MiniBrowser, the browser that comes with WebKitGTK (its path names the machine's architecture). */
export const MINIBROWSER_PATH = process.env.MINIBROWSER_PATH || findMiniBrowser();
/** The same engine in a shell of ours that keeps a profile on disk with a storage quota set low (storage tests). */
export const PROFILE_SHELL_PATH = fileURLToPath(new URL('./webkit-profile-shell.py', import.meta.url));
const SCREEN = '1600x1200x24';

function findMiniBrowser() {
  const fallback = '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
  const arch = readdirSync('/usr/lib').find((dir) => existsSync(`/usr/lib/${dir}/webkit2gtk-4.1/MiniBrowser`));
  return arch ? `/usr/lib/${arch}/webkit2gtk-4.1/MiniBrowser` : fallback;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `xvfb-run -a WebKitWebDriver --port=P` in a process group of its own; close() ends the group (Xvfb,
 * the driver and any browser it started).
 * @example const driver = await startWebKitDriver(); const session = await driver.newSession(); await driver.close();
 */
export async function startWebKitDriver() {
  const port = await freePort();
  const child = spawn(
    'xvfb-run',
    ['-a', '-s', `-screen 0 ${SCREEN}`, WEBKIT_DRIVER_PATH, `--port=${port}`, '--host=127.0.0.1'],
    {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-2000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  const kill = () => {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  try {
    await Promise.race([
      waitForDriver(url),
      exited.then((code) => Promise.reject(new Error(`WebKitWebDriver exited (${code}): ${stderr}`))),
    ]);
  } catch (error) {
    kill();
    throw error;
  }
  const profiles = new Set();
  return {
    url,
    /**
     * A new browser: MiniBrowser with ephemeral storage, or with `storageLimitBytes` the profile shell, whose
     * profile (a fresh directory) allows each origin that many bytes.
     */
    async newSession({ storageLimitBytes } = {}) {
      let options = { binary: MINIBROWSER_PATH, args: ['--automation'] };
      let profile = null;
      if (storageLimitBytes) {
        profile = mkdtempSync(`${tmpdir()}/webkit-profile-`);
        profiles.add(profile);
        options = {
          binary: PROFILE_SHELL_PATH,
          args: ['--automation', `--profile=${profile}`, `--origin-quota=${storageLimitBytes}`],
        };
      }
      const session = await newSession(url, { browserName: 'MiniBrowser', 'webkitgtk:browserOptions': options });
      const close = session.close;
      session.close = async () => {
        await close();
        if (profile) {
          rmSync(profile, { recursive: true, force: true });
          profiles.delete(profile);
        }
      };
      return session;
    },
    stderr: () => stderr,
    async close() {
      kill();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      for (const p of profiles) rmSync(p, { recursive: true, force: true });
    },
  };
}
