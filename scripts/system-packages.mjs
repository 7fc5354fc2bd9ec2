// Helpers of the ensure-* scripts: is a program there, and install Debian packages when it is not.
import { accessSync, constants } from 'node:fs';
import { spawnSync } from 'node:child_process';

/** True when `path` is an executable file. */
export function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** True when `command` is on PATH. */
export function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Runs `apt-get update && apt-get install -y <packages>` as root or through sudo; false when it cannot. */
export function aptInstall(packages, { quiet = false, label = 'ensure' } = {}) {
  if (!has('apt-get')) return false;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const prefix = isRoot ? '' : has('sudo') ? 'sudo ' : null;
  if (prefix === null) return false;
  const script = `${prefix}apt-get update && ${prefix}env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  if (!quiet) console.log(`${label}: ${script}`);
  return spawnSync('sh', ['-c', script], { stdio: quiet ? 'ignore' : 'inherit' }).status === 0;
}
