// A relay as the whole process: configuration from the environment, its server libraries, the server, and the
// signals (SIGTERM/SIGINT stop it gracefully and exit with the stop's code; SIGHUP reads the configuration again, so
// every secret given as <NAME>_FILE, and the till tokens, or in hub mode SHOPS_FILE, which is also read again when it
// changes). Shared by the `shop-lookup-relay` command and `npm run relay` (which puts the mock API's address in the
// environment).
import { readFileSync, watchFile } from 'node:fs';
import { fail } from './fail';
import { loadServerPeers } from './optionalPeers';
import { endRelayLog, flushRelayLog } from './relayLogger';
import { readRelayConfig, type Environment } from './relayServerConfig';
import { RelayStartError } from './relayStartError';
import { startRelayServer, type RelayServer } from './startRelayServer';

export interface RelayProcessHooks {
  /** Runs after a graceful stop, before the process exits (npm run relay closes its mock API here). */
  afterStop?: () => Promise<void>;
}

/**
 * Starts the relay the environment describes, or ends the process with one line saying what to change.
 * @example await runRelayProcess(process.env);
 */
export async function runRelayProcess(env: Environment, hooks: RelayProcessHooks = {}): Promise<RelayServer> {
  const readFile = (path: string): string => readFileSync(path, 'utf8');
  const config = readRelayConfig(env, readFile);
  if (!config.ok) fail(config.message, 2);
  const peers = await loadServerPeers({ redis: config.config.redisUrl !== undefined });
  if (!peers.ok) fail(peers.message, 2);
  let server: RelayServer;
  try {
    server = await startRelayServer(config.config, { peers: peers.peers });
  } catch (error) {
    if (error instanceof RelayStartError) fail(error.message, error.code === 'config' ? 2 : 1);
    fail(`could not start: ${(error as Error)?.message ?? error}`, 1);
  }
  const { log } = server;
  // after a graceful stop: the log's last lines written out first; a second signal or a fatal error: at once
  const exit = (code: number): void => {
    void endRelayLog(log).then(() => process.exit(code));
  };
  const exitNow = (code: number): never => {
    flushRelayLog(log);
    process.exit(code);
  };
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        exitNow(1);
      }
      stopping = true;
      void server
        .stop(signal)
        .then(async (code) => {
          await hooks.afterStop?.().catch(() => undefined);
          return code;
        })
        .then((code) => exit(code));
    });
  }
  process.on('SIGHUP', () => {
    // the environment is the start's: what a reload can change is what the `_FILE`s and the token files hold now
    const fresh = readRelayConfig(env, readFile);
    if (!fresh.ok) log.error({ error: fresh.message }, 'secrets not reloaded: the old ones stay');
    void server.reload(fresh.ok ? fresh.config : undefined);
  });
  const shopsFile = config.config.shopsFile;
  if (shopsFile !== undefined) {
    // stat-polled, so a Kubernetes secret's symlink swap is seen too; unchanged files are not read again
    watchFile(shopsFile, { interval: 1000 }, (now, before) => {
      if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) void server.reload();
    }).unref();
  }
  process.on('uncaughtException', (error) => {
    log.fatal({ err: error }, 'uncaught exception');
    exitNow(1);
  });
  process.on('unhandledRejection', (error) => {
    log.fatal({ err: error }, 'unhandled rejection');
    exitNow(1);
  });
  return server;
}
