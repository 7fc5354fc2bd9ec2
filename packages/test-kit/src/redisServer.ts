// A real, throwaway redis-server for the relay tests: a child process on a free loopback port, no persistence,
// stoppable and restartable on the same port (for the "Redis lost" tests), always killed when the tests end.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  /** 'redis://127.0.0.1:<port>' */
  url: string;
  port: number;
  /** Kills the server (SIGKILL: as if the machine went away); resolves once it has exited. Data is gone unless
   * the server is persistent. */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it answers PING. `empty`: without the data it kept (as a
   * Redis whose disk was lost). */
  start(options?: { empty?: boolean }): Promise<void>;
  running(): boolean;
}

const live = new Set<ChildProcess>();
const dirs = new Set<string>();
// A crashed or interrupted test run must not leave redis-servers (or their files) behind.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

export interface RedisServerOptions {
  /** Keep the data across stop()/start(): an append-only file fsynced on every write, in a temporary directory. */
  persistent?: boolean;
}

/** A free TCP port on 127.0.0.1 (also for the cluster's nodes: redisCluster.ts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True when something on `port` answers +PONG to an inline PING. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let text = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n')) done(text.startsWith('+PONG'));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts `redis-server --port <free> --bind 127.0.0.1 --save '' --appendonly no` and waits until it answers PING.
 * @example const redis = await startRedisServer(); afterAll(() => redis.stop());
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = process.env.REDIS_SERVER_PATH ?? 'redis-server';
  const port = await freePort();
  let child: ChildProcess | null = null;
  const dir = options.persistent ? mkdtempSync(join(tmpdir(), 'shop-lookup-redis-')) : null;
  if (dir) dirs.add(dir);
  const storage = dir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] : ['--appendonly', 'no'];

  async function start({ empty = false }: { empty?: boolean } = {}): Promise<void> {
    if (child) return;
    if (empty && dir) for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...storage];
    const proc = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (chunk) => (stderr += String(chunk)));
    const failed = new Promise<never>((_, reject) => {
      proc.once('error', (error) =>
        reject(new Error(`cannot start ${binary} (run scripts/ensure-redis.mjs): ${error.message}`)),
      );
      proc.once('exit', (code) => reject(new Error(`${binary} on port ${port} exited with ${code}: ${stderr.trim()}`)));
    });
    failed.catch(() => undefined);
    child = proc;
    live.add(proc);
    proc.once('exit', () => {
      live.delete(proc);
      if (child === proc) child = null;
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (await Promise.race([answersPing(port), failed])) return;
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    async stop() {
      const proc = child;
      if (!proc) return;
      proc.kill('SIGKILL');
      await exited(proc);
    },
    running: () => child !== null,
  };
}
