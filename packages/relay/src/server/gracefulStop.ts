// The graceful stop of a relay process (SIGTERM, SIGINT), in either mode: stop accepting connections, close the idle
// ones and tell each answer under way to close its own, end the relay or hub (parked long-polls answered at once, a
// commit under way finished, the sync lease released, the store closed), all within SHUTDOWN_TIMEOUT_MS; past it
// the rest is cut and the exit code is 1.
import type { Server } from 'node:http';
import type { ConnectionGuard } from './connectionGuard';
import type { LogBudget } from './logBudget';
import type { RelayLogger } from './relayLogger';
import type { ServerState } from './serverState';

export interface GracefulStopDeps {
  server: Server;
  guard: ConnectionGuard;
  log: RelayLogger;
  logBudget: LogBudget;
  /** SHUTDOWN_TIMEOUT_MS (the start's). */
  timeoutMs: number;
  /** Ends what serves (the relay or the hub, then the memory store). */
  close(): Promise<void>;
  /** Long-polls parked now, for the first line. */
  parked(): Promise<number>;
}

/**
 * The stop, once: a second call gets the first one's exit code.
 * @example const stop = gracefulStop(state, deps); process.once('SIGTERM', () => stop('SIGTERM').then(process.exit));
 */
export function gracefulStop(state: ServerState, deps: GracefulStopDeps): (reason: string) => Promise<number> {
  const { server, guard, log, logBudget, timeoutMs } = deps;
  let stopped: Promise<number> | null = null;

  async function stop(reason: string): Promise<number> {
    const t0 = performance.now();
    log.info({ reason, parked: await deps.parked().catch(() => 0) }, 'shutting down');
    server.close(); // no new connections
    for (const res of state.requests.inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    server.closeIdleConnections();
    const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
    // parked long-polls are answered now; a commit under way finishes; the lease is released; the store closed
    const graceful = (async () => {
      await deps.close();
      server.closeIdleConnections();
      await closed;
    })();
    const outcome = await Promise.race([graceful.then(() => 'done' as const), bound]);
    clearTimeout(timer);
    if (outcome === 'late') {
      log.error(
        { ms: timeoutMs, connections: guard.count() },
        'shutdown took longer than SHUTDOWN_TIMEOUT_MS: the rest is cut',
      );
      server.closeAllConnections();
      return 1;
    }
    logBudget.report(true);
    logBudget.close();
    log.info({ ms: Math.round(performance.now() - t0) }, 'stopped');
    return 0;
  }

  return (reason) => {
    state.phase = 'stopping';
    stopped ??= stop(reason);
    return stopped;
  };
}
