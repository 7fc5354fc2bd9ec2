// A real, throwaway Redis Cluster for the relay tests: three redis-server masters in cluster mode on free loopback
// ports, no replicas, no persistence, joined with `redis-cli --cluster create`, killed (and their files removed) after.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redisServer';

export interface RedisClusterServers {
  /** 'redis://127.0.0.1:<port>' of each master. */
  urls: string[];
  ports: number[];
  /** Kills every node and removes their files; resolves once all have exited. */
  stop(): Promise<void>;
}

const run = promisify(execFile);
const live = new Set<ChildProcess>();
const dirs = new Set<string>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The first line a node answers to an inline command (`PING`, `CLUSTER INFO`'s bulk text). */
function ask(port: number, command: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let text = '';
    const done = (): void => {
      socket.destroy();
      resolve(text);
    };
    socket.setTimeout(1000, done);
    socket.once('error', done);
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (text.startsWith('+') || text.startsWith('-') || /\r\n[\s\S]*\r\n/.test(text)) done();
    });
  });
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts three cluster-mode redis-servers (a cluster port each, port + 10000, must be free too) and joins them.
 * @example const cluster = await startRedisCluster();
 * const client = createCluster({ rootNodes: cluster.urls.map((url) => ({ url })) });
 */
export async function startRedisCluster(): Promise<RedisClusterServers> {
  const binary = process.env.REDIS_SERVER_PATH ?? 'redis-server';
  const cli = process.env.REDIS_CLI_PATH ?? 'redis-cli';
  const dir = mkdtempSync(join(tmpdir(), 'shop-lookup-cluster-'));
  dirs.add(dir);
  const ports: number[] = [];
  // the cluster bus listens on port + 10000: pick ports whose bus port is free as well
  while (ports.length < 3) {
    const port = await freePort();
    if (port > 55_000 || ports.includes(port)) continue;
    const bus = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port + 10_000, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (bus) ports.push(port);
  }
  const children = ports.map((port) => {
    const proc = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '5000',
      ],
      { stdio: 'ignore' },
    );
    live.add(proc);
    proc.once('exit', () => live.delete(proc));
    return proc;
  });
  const stop = async (): Promise<void> => {
    await Promise.all(
      children.map((proc) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
        const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
        proc.kill('SIGKILL');
        return exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
  };
  try {
    for (const port of ports)
      await until(`node ${port} did not answer PING`, async () => (await ask(port, 'PING')).startsWith('+PONG'));
    await run(cli, [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await until(`node ${port} did not report cluster_state:ok`, async () =>
        (await ask(port, 'CLUSTER INFO')).includes('cluster_state:ok'),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { urls: ports.map((port) => `redis://127.0.0.1:${port}`), ports, stop };
}
