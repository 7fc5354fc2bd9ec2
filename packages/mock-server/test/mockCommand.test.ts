// The shop-lookup-mock command from its source (packages/mock-server/src/mockCommand.ts through tsx, a process of
// its own): it serves the mock shop API on PORT (default 8787), prints its URL, the credentials it accepts and the
// codes to try, stops cleanly on SIGTERM and SIGINT, and says in one line why it cannot start. The packed command is
// run by test/consumers/newcomer.test.ts, as the README's "Run the relay" lines start it.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/mockCommand.ts', import.meta.url));

/** Runs the command with only this environment; resolves once it printed its URL (or ended). */
function startMock(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += String(c)));
  child.stderr.on('data', (c) => (stderr += String(c)));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const started = new Promise<string | null>((resolve) => {
    child.stdout.on('data', () => {
      const url = /^mock shop API on (http:\/\/\S+)/m.exec(stdout)?.[1];
      if (url) resolve(url);
    });
    void exited.then(() => resolve(null));
  });
  return { child, started, exited, out: () => ({ stdout, stderr }) };
}

describe('the shop-lookup-mock command', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`serves the mock API, prints its URL, credentials and codes to try, and exits 0 on ${signal}`, async () => {
      const mock = startMock({ PORT: '0' });
      try {
        const url = await mock.started;
        expect(url, mock.out().stderr).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const { stdout } = mock.out();
        expect(stdout).toContain('key demo-key, secret demo-secret');
        expect(stdout).toMatch(/^ {4}WELCOME10 +coupon: 10 % off/m);
        expect(stdout).toMatch(/^ {4}IC-0000-OPEN +issued coupon: single use/m);
        expect(stdout).toContain(`SHOP_API_TARGET=${url} SHOP_API_KEY=demo-key SHOP_API_SECRET=demo-secret`);
        const auth = await fetch(`${url}/v2/auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: 'demo-key', secret: 'demo-secret' }),
        });
        expect(((await auth.json()) as { access_token?: string }).access_token).toEqual(expect.any(String));
        mock.child.kill(signal);
        expect(await mock.exited).toBe(0);
        await expect(fetch(`${url}/v2/auth`)).rejects.toThrow();
      } finally {
        mock.child.kill('SIGKILL');
      }
    });
  }

  it('listens on 8787 by default: the port the README tells the relay (SHOP_API_TARGET)', async () => {
    // (the default port may be held by another run on this machine: then the one line says so, naming it)
    const mock = startMock({});
    try {
      const url = await mock.started;
      if (url === null)
        expect(mock.out().stderr).toMatch(/^shop-lookup-mock: PORT: port 8787 on 127\.0\.0\.1 is in use/);
      else expect(url).toBe('http://127.0.0.1:8787');
    } finally {
      mock.child.kill('SIGKILL');
      await mock.exited;
    }
  });

  it('says in one line why it cannot start: a port in use (exit 1), a PORT that is no port (exit 2)', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const inUse = startMock({ PORT: String(port) });
      expect(await inUse.exited).toBe(1);
      expect(inUse.out().stderr).toBe(
        `shop-lookup-mock: PORT: port ${port} on 127.0.0.1 is in use: stop the other server or set another PORT\n`,
      );
      const wrong = startMock({ PORT: 'eighty' });
      expect(await wrong.exited).toBe(2);
      expect(wrong.out().stderr).toBe(
        'shop-lookup-mock: PORT: expected a port number from 0 to 65535 (got "eighty")\n',
      );
    } finally {
      taken.close();
    }
  });
});
