// CPU time per process kind on this machine (Linux /proc), to see where a scenario's work went: the renderer (page
// and workers), the browser process (IndexedDB's backend), Chromium's network service, and this Node process (the
// mock API). On 2 cores, a scenario cannot run faster than its total CPU time / 2.
import { readFileSync, readdirSync } from 'node:fs';

/** pid → [parent pid, command line words, CPU ms so far] of every process that can be read. */
function processes() {
  const out = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      const ms = (Number(stat[11]) + Number(stat[12])) * 10; // clock ticks of 10 ms
      out.set(Number(pid), [Number(stat[1]), cmd, ms]);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * CPU ms so far, per process kind: this Node process, and the Chromium whose browser process is `browserPid` with
 * its children (not every Chromium on the machine: other jobs' browsers are not this bench's work).
 */
export function cpuByProcess(browserPid) {
  const all = processes();
  const ours = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 8; p = all.get(p)?.[0] ?? 0, hops++) if (p === browserPid) return true;
    return false;
  };
  const out = {};
  for (const [pid, [, cmd, ms]] of all) {
    let kind = null;
    if (pid === process.pid) kind = 'node (mock API, server)';
    else if (cmd[0].includes('chrom') && ours(pid)) {
      const type = cmd.find((a) => a.startsWith('--type='));
      const sub = cmd.find((a) => a.startsWith('--utility-sub-type='));
      kind = type ? `chromium ${type.slice(7)}${sub ? ` ${sub.split('.').pop()}` : ''}` : 'chromium browser';
    }
    if (kind) out[kind] = (out[kind] ?? 0) + ms;
  }
  return out;
}

/** CPU ms per process kind between two cpuByProcess() readings (kinds that used none left out). */
export function cpuBetween(before, after) {
  return Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, v - (before[k] ?? 0)])
      .filter(([, v]) => v > 0),
  );
}

/** CPU ms one process (by pid) has used so far (user and system), or NaN once it is gone. */
export function cpuOfProcess(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(stat[11]) + Number(stat[12])) * 10; // clock ticks of 10 ms
  } catch {
    return Number.NaN;
  }
}
