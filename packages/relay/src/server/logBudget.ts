// How many log lines one client may cause a minute (LOG_CLIENT_LINES_PER_MINUTE): a flood from one address must not
// fill the operator's disk (one address wrote 31 MB of request lines a minute). A client is a till by its name, else
// its network (IPv4 /24, IPv6 /64, as addresses are rotated within one); lines past its budget are not written but
// counted, and each minute one line per client says how many were dropped.

/** The client whose lines count together: `till:<name>`, else `net:<its /24 or /64>`. */
export function logClient(who: { address: string; till: string | null }): string {
  return who.till !== null ? `till:${who.till}` : `net:${networkOf(who.address)}`;
}

/** @example networkOf('203.0.113.7') // '203.0.113.0/24'; networkOf('2001:db8:1:2::7') // '2001:db8:1:2::/64' */
export function networkOf(address: string): string {
  const v4 = /^(?:::ffff:)?(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}$/i.exec(address);
  if (v4) return `${v4[1]}.0/24`;
  if (!address.includes(':')) return address;
  // the first four groups of the address written out in full (`::` expanded)
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '').toLowerCase())
    .join(':')}::/64`;
}

export interface LogBudget {
  /** Whether one more line of this client may be written now (else it is counted as dropped). */
  admit(client: string): boolean;
  /** Reports (and forgets) the drops of every client whose minute is over, or of all of them (at a stop). */
  report(all?: boolean): void;
  /** Stops the minute's timer (after a last `report(true)`). */
  close(): void;
}

export interface LogBudgetOptions {
  perMinute: number;
  /** Told once per client and minute that lines were dropped. */
  onDropped(client: string, dropped: number): void;
  /** Clients followed at once; the oldest beyond gives way (its drops reported). Default 10,000. */
  maxClients?: number;
  now?: () => number;
}

const MINUTE = 60_000;

/**
 * @example const budget = createLogBudget({ perMinute: 600, onDropped: (client, dropped) => log.warn({ client,
 * dropped }, 'log lines dropped') });
 */
export function createLogBudget(options: LogBudgetOptions): LogBudget {
  const now = options.now ?? Date.now;
  const maxClients = options.maxClients ?? 10_000;
  const clients = new Map<string, { since: number; lines: number; dropped: number }>();
  const forget = (client: string): void => {
    const seen = clients.get(client);
    clients.delete(client);
    if (seen && seen.dropped > 0) options.onDropped(client, seen.dropped);
  };
  const timer = setInterval(() => budget.report(), MINUTE);
  timer.unref();
  const budget: LogBudget = {
    admit(client) {
      let seen = clients.get(client);
      if (seen && now() - seen.since >= MINUTE) {
        forget(client);
        seen = undefined;
      }
      if (!seen) {
        if (clients.size >= maxClients) forget(clients.keys().next().value!);
        seen = { since: now(), lines: 0, dropped: 0 };
        clients.set(client, seen);
      }
      if (seen.lines < options.perMinute) {
        seen.lines++;
        return true;
      }
      seen.dropped++;
      return false;
    },
    report(all = false) {
      for (const [client, seen] of clients) if (all || now() - seen.since >= MINUTE) forget(client);
    },
    close() {
      clearInterval(timer);
    },
  };
  return budget;
}
