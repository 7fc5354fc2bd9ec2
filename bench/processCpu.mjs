// CPU time per process kind on this machine (Linux /proc), to see where a scenario's work went: the renderer (page
// and workers), the browser process (IndexedDB's backend), Chromium's network service, and this Node process (the
// mock API). On 2 cores, a scenario cannot run faster than its total CPU time / 2.
import { readFileSync, readdirSync } from 'node:fs';

/** CPU ms so far, per process kind. */
export function cpuByProcess() {
  const out = {};
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      const ms = (Number(stat[11]) + Number(stat[12])) * 10; // clock ticks of 10 ms
      let kind = null;
      if (cmd[0].includes('chrom')) {
        const type = cmd.find((a) => a.startsWith('--type='));
        const sub = cmd.find((a) => a.startsWith('--utility-sub-type='));
        kind = type ? `chromium ${type.slice(7)}${sub ? ` ${sub.split('.').pop()}` : ''}` : 'chromium browser';
      } else if (Number(pid) === process.pid) kind = 'node (mock API, server)';
      if (kind) out[kind] = (out[kind] ?? 0) + ms;
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU ms per process kind between two cpuByProcess() readings (kinds that used none left out). */
export function cpuBetween(before, after) {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => v > 0));
}
