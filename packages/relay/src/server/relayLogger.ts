// The relay command's log: pino, one JSON line per event on stdout. Every line passes a last scrub before it is
// written: the key, the secret, the signing secret, the operators' token and the upstream token never reach a log,
// plain or JSON-escaped, whatever a message or an error carried.
import type { Logger } from 'pino';
import type { Pino } from './optionalPeers';

export type RelayLogger = Logger;

export interface RelayLoggerOptions {
  level: string;
  /** Values that must never be written (too short ones are ignored: they would hit ordinary text). */
  secrets: () => readonly (string | null | undefined)[];
  /** Fields of every line. @example { shop: 'my-shop' } */
  bindings?: Record<string, unknown>;
  /** Where lines go; default stdout, buffered and written without blocking (see `flushRelayLog`). */
  destination?: { write(line: string): void };
}

/**
 * Replaces each secret in a written line, as is and as JSON escapes it.
 * @example scrubLine('{"msg":"bad key k3y-v4lue"}', ['k3y-v4lue']) // '{"msg":"bad key [redacted]"}'
 */
export function scrubLine(line: string, secrets: readonly (string | null | undefined)[]): string {
  let out = line;
  for (const secret of secrets) {
    if (!secret || secret.length < 6) continue;
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) {
      if (out.includes(form)) out = out.split(form).join('[redacted]');
    }
  }
  return out;
}

/**
 * Writes out what the log still buffers, before the process exits (a stop, a fatal error). Stdout written
 * synchronously would stall every request while a slow log reader lags behind; so lines are buffered (4 kB) and
 * written asynchronously, and flushed here at the end.
 * @example flushRelayLog(log); process.exit(code);
 */
export function flushRelayLog(log: RelayLogger): void {
  try {
    destinations.get(log)?.flushSync?.();
  } catch {
    // nothing more can be done for the log at exit
  }
}

const destinations = new WeakMap<RelayLogger, { flushSync?: () => void }>();

/** @example const log = createRelayLogger(pino, { level: 'info', secrets: () => [key, secret] }); log.info({ port }, 'listening'); */
export function createRelayLogger(pino: Pino, options: RelayLoggerOptions): RelayLogger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false });
  const log = pino(
    {
      level: options.level,
      base: { service: 'shop-lookup-relay', ...options.bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: (line) => scrubLine(line, options.secrets()) },
    },
    destination as Parameters<Pino>[1],
  );
  destinations.set(log, destination as { flushSync?: () => void });
  return log;
}
