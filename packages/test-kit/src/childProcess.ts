// A server of the scale test as its own Node process (a *Child.ts file of this folder run through tsx): a relay
// instance, or the mock API (so that its arrival times, which its rate limits count, are not skewed by the test
// process's own work). Started on a given or free port, steered over IPC, killable with SIGKILL as a crashed server
// dies (no lease release, no goodbye to Redis). Every child is killed when the test process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ChildServer<Ready> {
  /** 'http://127.0.0.1:<port>' */
  url: string;
  port: number;
  /** What the child reported once it listened. */
  ready: Ready;
  pid: number;
  /** Asks the child to do something; resolves with its answer. */
  request(message: { type: string }): Promise<unknown>;
  /** SIGKILL, and resolves once the process is gone. */
  kill(): Promise<void>;
  /** Closes the relay (releasing what it holds) and ends the process. */
  stop(): Promise<void>;
  alive(): boolean;
  /** What the child wrote to stdout and stderr, for failure messages. */
  output(): string;
}

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts `<file>` of this folder (it sends `{ ready: { port, ... } }` over IPC once it listens) and resolves then.
 * @example const relay = await startChildServer<{ port: number; instance: string }>('relayChild.ts', config);
 */
export async function startChildServer<Ready extends { port: number }>(
  file: string,
  config: unknown,
): Promise<ChildServer<Ready>> {
  const script = fileURLToPath(new URL(`./${file}`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(config)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // tsx maps the packages' names to their sources as the tests do (tsconfig.base.json's paths): a child imports
    // @shop-lookup/relay, whose package.json names the built dist/
    env: { ...process.env, NODE_ENV: 'test', TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.base.json') },
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let log = '';
  child.stdout?.on('data', (chunk) => (log += String(chunk)));
  child.stderr?.on('data', (chunk) => (log += String(chunk)));

  let nextId = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  const started = new Promise<Ready>((resolve, reject) => {
    child.on('message', (raw) => {
      const message = raw as { ready?: Ready; id?: number; result?: unknown; error?: string };
      if (message.ready) resolve(message.ready);
      if (message.id !== undefined) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error !== undefined) waiter?.reject(new Error(message.error));
        else waiter?.resolve(message.result);
      }
    });
    child.once('exit', (code, signal) => {
      const error = new Error(`${file} exited (${code ?? signal}):\n${log}`);
      reject(error);
      for (const waiter of pending.values()) waiter.reject(error);
      pending.clear();
    });
  });
  const ready = await started;

  return {
    url: `http://127.0.0.1:${ready.port}`,
    port: ready.port,
    ready,
    pid: child.pid!,
    request(message) {
      const id = ++nextId;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, ...message });
      });
    },
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ id: ++nextId, type: 'close' });
      await exited(child);
    },
    alive: () => child.exitCode === null && child.signalCode === null,
    output: () => log,
  };
}
