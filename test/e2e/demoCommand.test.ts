// `npm run demo`, the first command the README gives, as a newcomer runs it: the command itself (a process of its
// own, on a free PORT) serves the demo till with its app shell, so the till opened once reloads with no network at
// all and checks a coupon from IndexedDB; the till lists the codes to try. Chromium only: what every engine does
// with the app shell is appShell.test.ts's.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_CODES } from '../../packages/mock-server/src';
import { enginesOfRun, launchEngine, type Engine } from './engines';
import { applyCoupon, attrOf, textsOf, tid, waitFor, waitForFirstSync } from './harness';
import { startNetworkCut, type NetworkCut } from './networkCut';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

for (const engineName of enginesOfRun().filter((e) => e === 'chromium')) {
  describe(`npm run demo [${engineName}]`, { timeout: 300_000 }, () => {
    let demo: ReturnType<typeof spawn>;
    let output = '';
    let net: NetworkCut;
    let engine: Engine;

    beforeAll(async () => {
      const port = await freePort();
      // the command as the README runs it, in a process group of its own (npm, its shell, the server)
      demo = spawn('npm', ['run', 'demo'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: '127.0.0.1' },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      demo.stdout!.on('data', (c) => (output += String(c)));
      demo.stderr!.on('data', (c) => (output += String(c)));
      // (its build comes first: a minute or two on a busy machine)
      for (const end = Date.now() + 240_000; Date.now() < end; await new Promise((r) => setTimeout(r, 250)))
        if (new RegExp(`127\\.0\\.0\\.1:${port}`).test(output) || demo.exitCode !== null) break;
      if (demo.exitCode !== null) throw new Error(`npm run demo ended (${demo.exitCode}): ${output}`);
      net = await startNetworkCut(port);
      engine = await launchEngine(engineName);
    }, 300_000);

    afterAll(async () => {
      net?.restore();
      await engine?.close();
      await net?.close();
      try {
        process.kill(-demo.pid!, 'SIGTERM');
      } catch {
        // gone already
      }
    }, 60_000);

    it('serves the till with its app shell: opened once, it reloads with no network and checks a coupon offline', async () => {
      const context = await engine.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`http://127.0.0.1:${net.port}/`);
        await waitForFirstSync(page);
        await waitFor(
          page,
          '[data-testid="offline-ready"][data-state="ready"]',
          'the app shell cached for offline use',
        );
        // the codes to try, listed by the till
        const codes = await textsOf(page, tid('code-to-try'));
        expect(codes.map((c) => c.split(/\s/)[0])).toEqual(
          expect.arrayContaining([MOCK_CODES.welcomeCoupon, MOCK_CODES.issuedUnused]),
        );
        net.cut();
        await page.reload();
        await waitFor(page, tid('coupon-code'), 'the till opened with no network');
        await applyCoupon(page, MOCK_CODES.welcomeCoupon, 32_000);
        expect(await attrOf(page, tid('verdict'), 'data-state')).toBe('ok');
        expect(await attrOf(page, tid('verdict-source'), 'data-source')).toBe('local');
      } finally {
        net.restore();
        await context.close();
      }
    });
  });
}
