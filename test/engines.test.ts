// The Node range the README states (its two commands: "Node 20.19+") is what every package of the repository and
// every dependency in package-lock.json accepts, so `npm ci` on it warns no EBADENGINE; every package states it as its
// `engines` (the packages are ESM only, which CommonJS code can require() from Node 20.19 on).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const read = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as Record<string, any>;

type Version = [number, number, number];
const parse = (v: string): Version => {
  const [major = 0, minor = 0, patch = 0] = v
    .replace(/^v/, '')
    .split('.')
    .map((p) => (p === 'x' || p === '*' ? 0 : Number(p)));
  return [major, minor, patch];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * Whether `version` satisfies an engines range of the forms npm packages use (>=, ^, x.*, plain majors, ||, ranges).
 */
function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) => {
    const parts = alternative
      .trim()
      .replace(/(>=|<=|>|<|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    if (parts.length === 0) return true;
    return parts.every((part) => {
      const m = /^(>=|<=|>|<|\^|~)?(.*)$/.exec(part)!;
      const op = m[1] ?? '';
      const text = m[2]!;
      if (text === '*' || text === 'x') return true;
      const v = parse(text);
      const given = text
        .replace(/^v/, '')
        .split('.')
        .filter((p) => p !== '*' && p !== 'x').length;
      const c = compare(version, v);
      switch (op) {
        case '>=':
          return c >= 0;
        case '>':
          return c > 0;
        case '<=':
          return c <= 0;
        case '<':
          return c < 0;
        case '^':
          return version[0] === v[0] && c >= 0;
        case '~':
          return version[0] === v[0] && version[1] === v[1] && c >= 0;
        default: // '20', '6.*', '1.2.3': the parts given must match
          return version.slice(0, given).every((n, i) => n === v[i]);
      }
    });
  });
}

/** The lowest Node the README states for its two commands. */
function readmeMinimum(): Version {
  const stated = /\bNode (\d+(?:\.\d+)?)\+/.exec(readFileSync(join(root, 'README.md'), 'utf8'))?.[1];
  if (!stated) throw new Error('README.md states no "Node N+"');
  return parse(stated);
}

describe('engines', () => {
  it('reads the ranges npm packages use', () => {
    expect(satisfies([20, 19, 0], '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies([20, 18, 0], '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies([20, 19, 0], '>=22.12.0')).toBe(false);
    expect(satisfies([20, 19, 0], '>= 10.x')).toBe(true);
    expect(satisfies([20, 19, 0], '20 || >=22')).toBe(true);
    expect(satisfies([20, 19, 0], '6.* || 8.* || >= 10.*')).toBe(true);
    expect(satisfies([20, 19, 0], '^10 || ^12 || >=14')).toBe(true);
    expect(satisfies([20, 19, 0], '^16 || ^18')).toBe(false);
  });

  it("accepts the README's Node in every dependency of package-lock.json (npm ci warns no EBADENGINE)", () => {
    const minimum = readmeMinimum();
    const lock = read('package-lock.json');
    const refusing = Object.entries(lock.packages as Record<string, { engines?: { node?: string } }>)
      .filter(([, p]) => typeof p.engines?.node === 'string' && !satisfies(minimum, p.engines.node))
      .map(([path, p]) => `${path}: ${p.engines!.node}`);
    expect(refusing).toEqual([]);
  });

  it("states the README's Node as the engines of every package of the repository", () => {
    const minimum = readmeMinimum();
    const manifests = ['package.json', ...readdirSync(join(root, 'packages')).map((d) => `packages/${d}/package.json`)];
    for (const file of manifests) {
      const range = read(file).engines?.node;
      expect(range, file).toBe(`>=${minimum.join('.')}`);
      expect(satisfies(minimum, range), file).toBe(true);
    }
  });
});
