// The packed tarball itself: what a registry user downloads. Publishable (no `private`, a version, a license, a
// repository); every `exports` entry has its ESM build and types, and no source maps ship (docs/embedding.md says
// why); a README and the LICENSE; no tests; `sideEffects` names only the worker entry; the browser entry keeps the
// literal `new Worker(new URL('./worker.js', import.meta.url))` that bundlers follow; the Redis store's packages are
// optional peers that a browser install never pulls in.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedTarball, printTimings, timed } from './harness';

/** Packages only the relay's Redis store imports: optional peers, never dependencies. */
const REDIS_PEERS = ['rate-limiter-flexible', 'redis'];

const run = promisify(execFile);
let dir: string;
let files: string[];
let pkg: {
  exports: Record<string, { types: string; default: string } | string>;
  files: string[];
  sideEffects: string[];
  main: string;
  types: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  private?: boolean;
  version: string;
  license: string;
  repository: { type: string; url: string };
};

beforeAll(async () => {
  const tarball = await timed('pack', packedTarball);
  dir = await mkdtemp(join(tmpdir(), 'shop-lookup-tarball-'));
  await run('tar', ['-xzf', tarball, '-C', dir]);
  files = (await run('tar', ['-tzf', tarball])).stdout.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
  pkg = JSON.parse(await readFile(join(dir, 'package/package.json'), 'utf8'));
}, 600_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  printTimings('package.test.ts');
});

describe('the packed tarball', () => {
  it('is publishable: no private flag, a version, a license (and its text), a repository', () => {
    expect(pkg.private).toBeUndefined();
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\//) });
    expect(files).toContain('LICENSE');
  });

  it('has an ESM build and types for every exports entry, and no source maps', async () => {
    const entries = Object.entries(pkg.exports).filter(([k]) => k !== './package.json');
    expect(entries.map(([k]) => k).sort()).toEqual(['.', './mock-server', './mock-server/msw', './proxy', './react', './relay', './worker']);
    for (const [name, target] of entries) {
      if (typeof target === 'string') throw new Error(`${name}: expected { types, default }`);
      const js = target.default.replace(/^\.\//, '');
      const types = target.types.replace(/^\.\//, '');
      expect(files, name).toContain(js);
      expect(files, name).toContain(types);
      expect(await readFile(join(dir, 'package', js), 'utf8'), name).toMatch(/^import |^export |^\/\//m);
    }
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(files).toContain(pkg.main.replace(/^\.\//, ''));
    expect(files).toContain(pkg.types.replace(/^\.\//, ''));
  });

  it('has the README and no tests, sources or fixtures', () => {
    expect(files).toContain('README.md');
    expect(files.filter((f) => /(^|\/)test\/|\.test\.|\.spec\.|^src\/|^worker\/|^demo\/|^bench\/|^examples\//.test(f))).toEqual([]);
    expect(files.every((f) => ['README.md', 'LICENSE', 'package.json'].includes(f) || f.startsWith('dist/'))).toBe(true);
  });

  it('declares side effects for the worker entry only', () => {
    expect(pkg.sideEffects.filter((f) => f.startsWith('./dist/'))).toEqual(['./dist/worker.js']);
  });

  it('starts the worker with the literal pattern bundlers follow; the worker entry imports nothing, its chunks import their dependencies by name', async () => {
    const index = await readFile(join(dir, 'package/dist/index.js'), 'utf8');
    expect(index).toContain('new Worker(new URL("./worker.js", import.meta.url)');
    expect(index).not.toMatch(/assets\/|\.ts["']/);
    // the worker's entry imports nothing statically (WebKit evaluates an entry a second time when a chunk imports
    // it: worker/worker.ts); it loads the engine's chunk, which imports comlink by name
    const worker = await readFile(join(dir, 'package/dist/worker.js'), 'utf8');
    expect(worker).not.toMatch(/^import\s*(?!\()|\bfrom\s*["']/m);
    const engineChunk = worker.match(/import\("\.\/(exposeEngine[^"]*\.js)"\)/)?.[1];
    expect(engineChunk, 'the entry loads exposeEngine with import()').toBeTruthy();
    expect(await readFile(join(dir, 'package/dist', engineChunk!), 'utf8')).toMatch(/from "comlink"/);
    const chunks = await Promise.all(files.filter((f) => /^dist\/[^/]+\.js$/.test(f)).map((f) => readFile(join(dir, 'package', f), 'utf8')));
    const nodeChunks = await Promise.all(files.filter((f) => /^dist\/node\/.+\.js$/.test(f)).map((f) => readFile(join(dir, 'package', f), 'utf8')));
    for (const dep of Object.keys(pkg.dependencies)) {
      // statically, or with import() as the in-memory store that stands in where IndexedDB cannot be used
      expect(chunks.some((c) => c.includes(`from "${dep}`) || c.includes(`import("${dep}")`)), `${dep} imported by name`).toBe(true);
    }
    // the relay's Redis store (dist/node only) imports its packages by name; no browser file ever names them
    for (const dep of REDIS_PEERS) {
      expect(nodeChunks.some((c) => c.includes(`from "${dep}`)), `${dep} imported by name`).toBe(true);
      expect(chunks.some((c) => c.includes(`"${dep}`)), `${dep} kept out of the browser entries`).toBe(false);
    }
  });

  it('makes the Redis store\'s packages optional peers: a browser app installs no server library', () => {
    for (const dep of REDIS_PEERS) {
      expect(pkg.dependencies, dep).not.toHaveProperty(dep);
      expect(pkg.peerDependencies, dep).toHaveProperty(dep);
      expect(pkg.peerDependenciesMeta[dep], dep).toEqual({ optional: true });
    }
  });

  it('keeps React out of the main entry and msw out of the browser files: both are optional peers, never bundled', async () => {
    expect(pkg.peerDependencies).toHaveProperty('msw');
    expect(pkg.peerDependencies).toHaveProperty('react');
    expect(pkg.peerDependenciesMeta).toMatchObject({ msw: { optional: true }, react: { optional: true } });
    expect(Object.keys(pkg.dependencies)).not.toContain('react');
    const browserFiles = files.filter((f) => /^dist\/[^/]+\.js$/.test(f));
    for (const f of browserFiles) {
      const code = await readFile(join(dir, 'package', f), 'utf8');
      expect(code, f).not.toMatch(/from "msw/);
      if (f !== 'dist/react.js') expect(code, f).not.toMatch(/from "react|useSyncExternalStore/);
    }
    const hooks = await readFile(join(dir, 'package/dist/react.js'), 'utf8');
    expect(hooks).toMatch(/from "react"/);
    expect(hooks).not.toMatch(/function createElement|__SECRET_INTERNALS|ReactSharedInternals/);
    const msw = await readFile(join(dir, 'package/dist/node/mock-server-msw.js'), 'utf8');
    expect(msw).toMatch(/from "msw"/);
  });

  it('keeps the Node-only entries out of the browser entry', async () => {
    const browserFiles = files.filter((f) => /^dist\/[^/]+\.js$/.test(f));
    for (const f of browserFiles) {
      const code = await readFile(join(dir, 'package', f), 'utf8');
      expect(code, f).not.toMatch(/from "node:|\/node\//);
    }
  });

  it('is small', async () => {
    const { stdout } = await run('du', ['-sb', join(dir, 'package')]);
    const bytes = Number(stdout.split('\t')[0]);
    console.log(`[consumers] tarball unpacked: ${(bytes / 1024).toFixed(0)} kB, ${files.length} files`);
    expect(bytes).toBeLessThan(1_500_000);
  });
});
