// The shop-lookup-relay command as the tests run it: its source entry (packages/relay/src/server/main.ts) through
// tsx, in a process of its own with only the environment given (no variable of this machine leaks in). A server is
// ready once it logs "listening" (its port is in that line); every line any of them wrote is kept, so a test can
// check that no log line of the run holds a secret.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../../relay/src/server/main.ts', import.meta.url));

export type Json = Record<string, any>;

export interface RelayBinProcess {
  /** 'http://127.0.0.1:<port>' */
  url: string;
  port: number;
  pid: number;
  /** The instance id it logged (the sync lease's owner name). */
  instance: string;
  /** Its log lines so far, parsed (stdout), and anything else it wrote. */
  logs(): Json[];
  output(): string;
  /** Sends a signal (SIGTERM, SIGINT, SIGHUP, SIGKILL). */
  signal(name: NodeJS.Signals): void;
  /** SIGKILL, resolves once it is gone. */
  kill(): Promise<void>;
  /** Resolves with how it ended, once everything it wrote has been read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
}

/** Every line written by every relay command this test process started (stdout and stderr). */
export const everyRelayLine: string[] = [];

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function spawnBin(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function lines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  let rest = '';
  stream?.on('data', (chunk) => {
    const parts = (rest + String(chunk)).split('\n');
    rest = parts.pop()!;
    for (const line of parts) onLine(line);
  });
  stream?.on('end', () => rest && onLine(rest));
}

/**
 * Runs a command of the bin to its end (a config error, `token`): its exit code and what it wrote.
 * @example const { code, stderr } = await runRelayBin([], { SHOP_API_KEY: 'k' });
 */
export async function runRelayBin(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnBin(args, env);
  let stdout = '';
  let stderr = '';
  lines(child.stdout, (l) => {
    stdout += `${l}\n`;
    if (args[0] !== 'token') everyRelayLine.push(l); // the token command's output is the token itself
  });
  lines(child.stderr, (l) => {
    stderr += `${l}\n`;
    everyRelayLine.push(l);
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  return { code, stdout, stderr };
}

/**
 * Starts a relay server from the bin and resolves once it listens.
 * @example const relay = await startRelayBin({ SHOP_API_KEY: key, SHOP_API_SECRET: secret, SHOP_API_TARGET: api.url,
 * RELAY_PUBLIC: 'true', PORT: '0' });
 */
export async function startRelayBin(env: Record<string, string>): Promise<RelayBinProcess> {
  const child = spawnBin([], { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env });
  const logs: Json[] = [];
  let output = '';
  let listening: (line: Json) => void;
  const ready = new Promise<Json>((resolve) => (listening = resolve));
  const onLine = (line: string): void => {
    everyRelayLine.push(line);
    output += `${line}\n`;
    try {
      const parsed = JSON.parse(line) as Json;
      logs.push(parsed);
      if (parsed.msg === 'listening') listening(parsed);
    } catch {
      // not a log line (a start failure, a stack trace of a crash): kept in output()
    }
  };
  lines(child.stdout, onLine);
  lines(child.stderr, onLine);
  // 'close', not 'exit': the process may be gone before its last log lines were read from the pipes
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const first = await Promise.race([
    ready,
    exited.then((e) => {
      throw new Error(`the relay exited (${e.code ?? e.signal}) before listening:\n${output}`);
    }),
  ]);
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    url: `http://127.0.0.1:${first.port}`,
    port: first.port as number,
    pid: child.pid!,
    instance: first.instance as string,
    logs: () => logs,
    output: () => output,
    signal: (name) => void child.kill(name),
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    exited,
    alive,
  };
}
