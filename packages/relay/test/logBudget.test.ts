// The relay command's bound on log lines per client (LOG_CLIENT_LINES_PER_MINUTE): a till by its name, else its
// network (/24, /64: addresses rotated within one count together), a minute at a time, drops reported once.
import { describe, expect, it } from 'vitest';
import { createLogBudget, logClient, networkOf } from '../src/server/logBudget';

describe('logBudget', () => {
  it('groups anonymous clients by their /24 or /64, and tills by name', () => {
    expect(networkOf('203.0.113.7')).toBe('203.0.113.0/24');
    expect(networkOf('::ffff:203.0.113.250')).toBe('203.0.113.0/24');
    expect(networkOf('2001:db8:0001:2::7')).toBe('2001:db8:1:2::/64');
    expect(networkOf('2001:DB8:1:2:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(networkOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(networkOf('::1')).toBe('0:0:0:0::/64');
    expect(logClient({ address: '203.0.113.7', till: 'front-1' })).toBe('till:front-1');
    expect(logClient({ address: '203.0.113.9', till: null })).toBe(logClient({ address: '203.0.113.200', till: null }));
  });

  it('admits perMinute lines of a client a minute, and reports the rest once when its minute is over', () => {
    let now = 0;
    const reported: [string, number][] = [];
    const budget = createLogBudget({
      perMinute: 3,
      now: () => now,
      onDropped: (client, dropped) => reported.push([client, dropped]),
    });
    try {
      const admitted = Array.from({ length: 8 }, () => budget.admit('net:a'));
      expect(admitted).toEqual([true, true, true, false, false, false, false, false]);
      expect(budget.admit('net:b')).toBe(true);
      now += 59_999;
      budget.report();
      expect(reported).toEqual([]);
      now += 1;
      expect(budget.admit('net:a')).toBe(true); // a new minute; the last one's drops said once
      expect(reported).toEqual([['net:a', 5]]);
      budget.report(true);
      expect(reported).toEqual([['net:a', 5]]); // nothing dropped since, and b never lost a line
    } finally {
      budget.close();
    }
  });

  it('follows at most maxClients at once: the oldest gives way, its drops reported', () => {
    const reported: [string, number][] = [];
    const budget = createLogBudget({
      perMinute: 1,
      maxClients: 2,
      onDropped: (client, dropped) => reported.push([client, dropped]),
    });
    try {
      budget.admit('net:a');
      budget.admit('net:a');
      budget.admit('net:b');
      budget.admit('net:c');
      expect(reported).toEqual([['net:a', 1]]);
    } finally {
      budget.close();
    }
  });
});
