// The shop-lookup-relay command as an operator gets it: `npm install` of the packed @shop-lookup/relay alone in an app
// of its own, then the bin from node_modules/.bin (and `npx @shop-lookup/relay help`). The one install brings what the
// command needs; started as the docs say (the command itself, or exec'ed by a shell), it serves the packed mock API's
// shop, answers its health routes and a till, prints a till token, and on SIGTERM answers its parked long-poll and
// exits, leaving no process behind.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installFixture, packedTarballs, printTimings, serverPackages, timed, type Fixture } from './harness';

let app: Fixture;
let bin: string;

beforeAll(async () => {
  const { relay } = await timed('pack', packedTarballs);
  app = await timed('install', () => installFixture('relay-bin-app', relay));
  bin = join(app.dir, 'node_modules/.bin/shop-lookup-relay');
}, 600_000);

afterAll(async () => {
  await app?.remove();
  printTimings('relayBin.test.ts');
}, 60_000);

const secretEnv = { TILL_TOKEN_SECRET: 'consumer-till-signing-secret-0123456789', SHOP_ID: 'consumer-shop' };

describe('the packed shop-lookup-relay command', { timeout: 300_000 }, () => {
  it('one install brings every library the command needs, and `npx @shop-lookup/relay` runs it', async () => {
    for (const lib of ['pino', 'prom-client', 'redis', 'rate-limiter-flexible', 'zod']) {
      expect(existsSync(join(app.dir, 'node_modules', lib, 'package.json')), lib).toBe(true);
    }
    expect(existsSync(join(app.dir, 'node_modules/shop-lookup')), 'shop-lookup').toBe(false);
    const { stdout } = await app.run('npx', ['--no', '@shop-lookup/relay', 'help']);
    expect(stdout).toMatch(/^usage: shop-lookup-relay /);
  });

  it('--help points to the docs the package ships, where every variable is', async () => {
    const { stdout } = await app.run(bin, ['--help']);
    const docs = /docs\/relay\.md, "Deploy": (\S+)$/m.exec(stdout)?.[1];
    expect(docs).toBe(join(app.dir, 'node_modules/@shop-lookup/relay/dist/docs/relay.md'));
    const page = await readFile(docs!, 'utf8');
    for (const name of ['SHOP_API_TARGET', 'CORS_ORIGINS', 'TILL_TOKENS_FILE'])
      expect(page, name).toMatch(new RegExp(`^\\| \`${name}\``, 'm'));
    expect(stdout).toMatch(
      /online: https:\/\/github\.com\/shop-lookup\/shop-lookup\/blob\/main\/docs\/relay\.md#deploy$/m,
    );
  });

  // as docs/relay.md ("Signals") says to start it: the installed command itself (a container's exec-form CMD, a
  // systemd ExecStart), or `exec`ed as a script's last line; never through npx, whose npm would get the signals
  const documented = (): [string, string[], string][] => [
    [bin, [], 'node_modules/.bin/shop-lookup-relay'],
    ['sh', ['-c', 'exec node_modules/.bin/shop-lookup-relay'], "sh -c 'exec node_modules/.bin/shop-lookup-relay'"],
  ];

  it('serves a shop, answers /healthz, /readyz and a till, and on SIGTERM answers its parked long-poll, exits 0 and leaves nothing', async () => {
    const token = (await app.run(bin, ['token', '--till', 'front-1', '--days', '1'], { env: secretEnv })).stdout.trim();
    // the mock API from the packed @shop-lookup/mock-server, installed apart: the operator's app holds the relay only
    const servers = await timed('server packages', serverPackages);
    const { startMockShopApi } = await servers.importDep<{
      startMockShopApi(o?: object): Promise<{ url: string; close(): Promise<void> }>;
    }>('@shop-lookup/mock-server');
    const mock = await startMockShopApi({ rateLimits: false });
    try {
      for (const [command, args, how] of documented()) {
        const child = spawn(command, args, {
          cwd: app.dir,
          env: {
            PATH: process.env.PATH,
            ...secretEnv,
            SHOP_API_KEY: 'demo-key',
            SHOP_API_SECRET: 'demo-secret',
            SHOP_API_TARGET: mock.url,
            HOST: '127.0.0.1',
            PORT: '0',
            BASE_PATH: '/shop-api',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let relayPid: number | undefined;
        try {
          let out = '';
          const port = await new Promise<number>((resolve, reject) => {
            child.stdout.on('data', (chunk) => {
              out += String(chunk);
              const listening = /^.*"msg":"listening".*$/m.exec(out);
              if (listening) {
                const line = JSON.parse(listening[0]) as { port: number; pid: number };
                relayPid = line.pid;
                resolve(line.port);
              }
            });
            child.once('exit', (code) => reject(new Error(`${how}: the relay exited (${code}): ${out}`)));
          });
          // the process that gets the signal is the relay itself
          expect(relayPid, how).toBe(child.pid);
          const origin = `http://127.0.0.1:${port}`;
          expect((await fetch(`${origin}/healthz`)).status).toBe(200);
          for (let ready = false; !ready; ) ready = (await fetch(`${origin}/readyz`)).status === 200;
          expect((await fetch(`${origin}/shop-api/relay/v1/feed?limit=1`)).status).toBe(401);
          const feed = await fetch(`${origin}/shop-api/relay/v1/feed?limit=1`, {
            headers: { authorization: `Bearer ${token}` },
          });
          expect(feed.status).toBe(200);
          const head = (await feed.json()) as { upserts: unknown[]; version: number; handle: string };
          expect(head.upserts).toHaveLength(1);
          const parked = fetch(`${origin}/shop-api/relay/v1/feed?since=${head.version}&handle=${head.handle}&wait=60`, {
            headers: { authorization: `Bearer ${token}` },
          });
          for (let waiting = 0; waiting < 1; await new Promise((resolve) => setTimeout(resolve, 20))) {
            waiting = ((await (await fetch(`${origin}/shop-api/relay/v1/status`)).json()) as { waiting: number })
              .waiting;
          }
          const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
          child.kill('SIGTERM');
          // answered at once (not after its 60 s), and the process ends by itself
          expect((await parked).status, how).toBe(200);
          expect(await exited, how).toBe(0);
          // the relay itself got the signal with the long-poll parked, and answered it while stopping (within
          // SHUTDOWN_TIMEOUT_MS, 10 s: exit code 0), not when its 60 s ran out
          expect(out).toMatch(/"reason":"SIGTERM","parked":1[^\n]*"msg":"shutting down"/);
          expect(out).toContain('"msg":"stopped"');
          expect(out).not.toContain('started through npm');
          expect(() => process.kill(relayPid!, 0), `${how}: the relay's pid ${relayPid} is gone`).toThrow(
            expect.objectContaining({ code: 'ESRCH' }),
          );
        } finally {
          child.kill('SIGKILL');
          if (relayPid !== undefined) {
            try {
              process.kill(relayPid, 'SIGKILL');
            } catch {
              // gone, as it should be
            }
          }
        }
      }
    } finally {
      await mock.close();
    }
  });
});
