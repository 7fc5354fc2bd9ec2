// The relay command's log: pino, one JSON line per event on stdout. Every line passes a last scrub before it is
// written (the relay's one redaction, door/redaction.ts): the key, the secret, the signing secret, the operators'
// token and the upstream token never reach a log, in any form, whatever a message or an error carried.
import type { Logger } from 'pino';
import { secretsPattern } from '../door/redaction';
import type { Pino } from './optionalPeers';

export type RelayLogger = Logger;

export interface RelayLoggerOptions {
  level: string;
  /** Values that must never be written (too short ones are ignored: they would hit ordinary text). */
  secrets: () => readonly (string | null | undefined)[];
  /** Fields of every line. @example { shop: 'my-shop' } */
  bindings?: Record<string, unknown>;
  /** Where lines go; default stdout, buffered and written without blocking (see `endRelayLog`). */
  destination?: { write(line: string): void };
}

const sameList = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * A scrub of lines that keeps its pattern while the list of secrets stays the same (it changes on a reload or a new
 * upstream token, not per line).
 */
function createScrub(): (line: string, secrets: readonly (string | null | undefined)[]) => string {
  let last: { secrets: readonly (string | null | undefined)[]; pattern: RegExp | null } | null = null;
  return (line, secrets) => {
    if (last === null || !sameList(last.secrets, secrets))
      last = { secrets: [...secrets], pattern: secretsPattern(secrets) };
    return last.pattern === null ? line : line.replace(last.pattern, '[redacted]');
  };
}

/**
 * Replaces each secret in a written line, in every form the relay's redaction knows (as is, JSON- or \u-escaped,
 * percent-encoded, inside base64, in any letter case).
 * @example scrubLine('{"msg":"bad key k3y-v4lue"}', ['k3y-v4lue']) // '{"msg":"bad key [redacted]"}'
 */
export const scrubLine = (line: string, secrets: readonly (string | null | undefined)[]): string =>
  createScrub()(line, secrets);

/**
 * Writes out what the log still buffers, then resolves, before the process exits after a stop. Stdout
 * written synchronously would stall every request while a slow log reader lags behind; so lines are written
 * asynchronously, and a line whose write is still under way at exit would be lost (the stop's last line, "stopped",
 * was): this ends the destination and waits for its last write, at most `boundMs`.
 * @example await endRelayLog(log); process.exit(code);
 */
export function endRelayLog(log: RelayLogger, boundMs = 2_000): Promise<void> {
  const destination = destinations.get(log);
  if (!destination?.end || !destination.once) {
    flushRelayLog(log);
    return Promise.resolve();
  }
  const { end, once } = destination;
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, boundMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    once.call(destination, 'close', done);
    once.call(destination, 'error', done);
    try {
      end.call(destination);
    } catch {
      done();
    }
  });
}

/**
 * Writes out at once what the log still buffers (a write under way may be lost): for an exit that cannot wait, a
 * second signal or a fatal error.
 * @example flushRelayLog(log); process.exit(1);
 */
export function flushRelayLog(log: RelayLogger): void {
  try {
    destinations.get(log)?.flushSync?.();
  } catch {
    // nothing more can be done for the log at exit
  }
}

interface Destination {
  flushSync?: () => void;
  end?: () => void;
  once?: (event: string, listener: () => void) => unknown;
}

const destinations = new WeakMap<RelayLogger, Destination>();

/**
 * @example const log = createRelayLogger(pino, { level: 'info', secrets: () => [key, secret] }); log.info({ port },
 * 'listening');
 */
export function createRelayLogger(pino: Pino, options: RelayLoggerOptions): RelayLogger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false });
  const scrub = createScrub();
  const log = pino(
    {
      level: options.level,
      base: { service: 'shop-lookup-relay', ...options.bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: (line) => scrub(line, options.secrets()) },
    },
    destination as Parameters<Pino>[1],
  );
  destinations.set(log, destination as Destination);
  return log;
}
