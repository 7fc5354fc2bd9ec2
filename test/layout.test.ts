// The layout of ARCHITECTURE.md, checked: the root a private workspace of packages/*, each package with its own
// tsconfig.json and its tests; which package may import which (by name, downward only), what each folder may import,
// and the one-line header every file opens with.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Every TypeScript source file below `dir` (relative to the repo root). */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)).split('\\').join('/'));
}

interface Manifest {
  name: string;
  private?: boolean;
  workspaces?: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest;

/** The workspace packages (packages/<dir>), by folder, and the root package. */
const PACKAGE_DIRS = readdirSync(join(root, 'packages')).filter((d) =>
  existsSync(join(root, 'packages', d, 'package.json')),
);
const packages = new Map(PACKAGE_DIRS.map((d) => [`packages/${d}`, manifest(`packages/${d}`)]));
const rootPackage = manifest('.');

/** The package a file belongs to (its name): packages/<dir>/... is that package's, anything else the root's. */
function packageOf(file: string): string {
  const dir = /^packages\/[^/]+/.exec(file)?.[0];
  return dir === undefined ? rootPackage.name : packages.get(dir)!.name;
}

/**
 * Which packages each package may import by name: downward only, the browser package and the relay onto the shop API
 * client, never back up (ARCHITECTURE.md, "The packages").
 */
const PACKAGE_MAY_IMPORT: Record<string, string[]> = {
  'shop-lookup': ['@shop-lookup/shop-api'],
  '@shop-lookup/relay': ['@shop-lookup/shop-api'],
  '@shop-lookup/mock-server': ['@shop-lookup/shop-api'],
  '@shop-lookup/shop-api': [],
  // the tests' shared fixtures start the mock and the relay; no package's code imports them
  '@shop-lookup/test-kit': ['@shop-lookup/mock-server', '@shop-lookup/relay'],
};
const WORKSPACE_NAMES = new Set([rootPackage.name, ...[...packages.values()].map((p) => p.name)]);

/** A path from the root as ARCHITECTURE.md names it: the browser package's files by their src/ and worker/ paths. */
const named = (path: string) => path.replace(/^packages\/shop-lookup\//, '');

/** The folder a file belongs to in ARCHITECTURE.md's table: `worker/sync/direct`, `relay/door`, `shop-api`, ... */
function folderOf(file: string): string {
  // shop-lookup's reads as src/... and worker/..., another package's source (packages/<name>/src/...) as <name>/...
  const parts = named(file)
    .replace(/^packages\/([^/]+)\/src\//, '$1/')
    .split('/');
  // a package's defaults (worker/defaults.ts, relay/defaults.ts): a folder of their own, below every other
  if ((parts[0] === 'worker' || parts[0] === 'relay') && parts.length === 2 && parts[1] === 'defaults.ts')
    return `${parts[0]}/defaults`;
  if (parts[0] === 'worker') {
    if (parts.length === 2) return 'worker';
    if (parts[1] === 'sync' && parts.length > 3) return parts.slice(0, 3).join('/');
    return parts.slice(0, 2).join('/');
  }
  if (parts[0] === 'src' && parts[1] === 'react') return 'src/react';
  if (parts[0] === 'mock-server' && parts[1] === 'msw') return 'mock-server/msw';
  if (parts[0] === 'relay') {
    if (parts.length === 2) return parts[1] === 'index.ts' ? 'relay/index' : 'relay';
    return parts.slice(0, 2).join('/'); // relay/store/redis and relay/store/memory are the store's
  }
  return parts[0]!;
}

/** Each import specifier of `file`, as written (static, dynamic, `typeof import`, `export … from`). */
function specifiersOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const found = text.matchAll(/(?:^\s*(?:import|export)\b[^;'"]*?\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'([^']+)'/gm);
  return [...found].map((m) => m[1]!);
}

/** Each relative import of `file`, resolved to a path from the root. */
function importsOf(file: string): string[] {
  return specifiersOf(file)
    .filter((s) => s.startsWith('./') || s.startsWith('../'))
    .map((s) =>
      normalize(join(dirname(file), s))
        .split('\\')
        .join('/'),
    );
}

/**
 * The package a bare specifier names: 'zod/mini' is zod, '@shop-lookup/mock-server/msw' is @shop-lookup/mock-server.
 */
function packageNamed(specifier: string): string {
  return specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
}

/**
 * Which folders each folder may import (besides itself). The engine's folders are layered: a folder imports
 * only folders above it in this list, never one below (see ARCHITECTURE.md, "What each folder may import").
 */
const MAY_IMPORT: Record<string, string[]> = {
  src: ['src/protocol (types and the error class)', 'worker/engine (createEngine, loaded only with worker: false)'],
  'src/react': ['src'],
  'worker/store': ['src/protocol'],
  'worker/tabs': ['src/protocol'],
  'worker/sync': [
    'src/protocol',
    'worker/store',
    'worker/tabs',
    'worker/lookups',
    'worker/sync/direct',
    'worker/sync/relay',
  ],
  'worker/sync/direct': ['src/protocol', 'worker/store', 'worker/sync'],
  'worker/sync/relay': ['src/protocol', 'worker/store', 'worker/tabs', 'worker/sync'],
  'worker/lookups': ['src/protocol', 'worker/store', 'worker/tabs', 'worker/sync', 'worker/sync/direct'],
  'worker/coupon': ['src/protocol', 'worker/store'],
  'worker/engine': [
    'src/protocol',
    'worker/store',
    'worker/tabs',
    'worker/sync',
    'worker/sync/direct',
    'worker/sync/relay',
    'worker/lookups',
    'worker/coupon',
  ],
  worker: ['src/protocol', 'worker/engine'],
  'shop-api': [],
  // the relay, layered: the door and the store at the bottom, the modes (createShopRelay, createShopApiProxy) on
  // top of the feed and the upstream sync, the hub on a mode, the command on everything
  'relay/door': [],
  'relay/store': [],
  'relay/feed': ['relay/door', 'relay/store'],
  'relay/upstream': ['relay/door', 'relay/store', 'relay/feed'],
  relay: ['relay/door', 'relay/store', 'relay/feed', 'relay/upstream'],
  'relay/hub': ['relay', 'relay/door', 'relay/store', 'relay/feed', 'relay/upstream'],
  'relay/server': ['relay', 'relay/door', 'relay/store', 'relay/feed', 'relay/upstream', 'relay/hub'],
  'relay/index': ['relay', 'relay/door', 'relay/store', 'relay/feed', 'relay/upstream', 'relay/hub'],
  'worker/defaults': [],
  'relay/defaults': [],
  'mock-server': [],
  'mock-server/msw': ['mock-server'],
  'test-kit': [],
};

/**
 * The defaults of the engine and of the relay (worker/defaults.ts, relay/defaults.ts): they import nothing of their
 * package (their row below is empty), and every folder of it may import them.
 */
const DEFAULTS: Record<string, string> = { worker: 'worker/defaults', relay: 'relay/defaults' };

/** Whether `target` (a path from the root, without extension) lies in what `allowed` names. */
function allowedBy(allowed: string[], target: string, from: string): boolean {
  if (folderOf(`${target}.ts`) === DEFAULTS[from.split('/')[0]!]) return true;
  return allowed.some((a) => {
    const path = a.split(' ')[0]!;
    if (path === 'src/protocol') return named(target) === 'src/protocol';
    if (path === 'worker/engine') return folderOf(`${target}.ts`) === 'worker/engine';
    return folderOf(`${target}.ts`) === path;
  });
}

const files = ['packages/shop-lookup/worker', ...PACKAGE_DIRS.map((d) => `packages/${d}/src`)].flatMap(sources);

/** The source file an import names (`./x` is `./x.ts`, `./x.tsx` or `./x/index.ts`), if it is one of ours. */
const known = new Set(files);
const fileOf = (target: string) => [`${target}.ts`, `${target}.tsx`, `${target}/index.ts`].find((f) => known.has(f));
const graph = new Map(
  files.map((f) => [
    f,
    importsOf(f)
      .map(fileOf)
      .filter((t): t is string => t !== undefined),
  ]),
);

/** Every file `file` reaches through its imports, type-only ones included (they are a dependency too). */
function reachedFrom(file: string): Set<string> {
  const seen = new Set<string>();
  const todo = [file];
  for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
    for (const t of graph.get(f) ?? []) if (!seen.has(t)) todo.push(t), seen.add(t);
  }
  return seen;
}

/** The import circles (strongly connected groups of files, Tarjan's algorithm), each as its files. */
function importCircles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = stack.splice(stack.indexOf(v));
    if (group.length > 1) circles.push(group.sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return circles;
}

/** A tsconfig file (JSON with `//` comments). */
const tsconfig = (path: string) =>
  JSON.parse(readFileSync(join(root, path), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as {
    compilerOptions?: { lib?: string[]; types?: string[] };
    references?: { path: string }[];
  };

describe('the workspace', () => {
  it('is a private root whose workspaces are packages/*, with no package source of its own', () => {
    expect(rootPackage).toMatchObject({ private: true, workspaces: ['packages/*'] });
    expect(['src', 'worker', 'moved'].filter((dir) => existsSync(join(root, dir)))).toEqual([]);
  });

  it('type-checks every package with its own tsconfig.json, and every test folder with its own, in `tsc -b`', () => {
    const referenced = tsconfig('tsconfig.json').references!.map((r) => r.path);
    const projects = PACKAGE_DIRS.flatMap((d) => [`packages/${d}`, `packages/${d}/test`]).filter((p) =>
      existsSync(join(root, p)),
    );
    for (const p of projects) expect(existsSync(join(root, p, 'tsconfig.json')), p).toBe(true);
    expect(referenced).toEqual(expect.arrayContaining(projects));
  });

  it('gives the browser package the DOM and no Node types, the server packages Node and no DOM', () => {
    const browser = tsconfig('packages/shop-lookup/tsconfig.json').compilerOptions!;
    expect(browser.lib).toEqual(expect.arrayContaining(['DOM']));
    expect(browser.types ?? []).not.toContain('node');
    for (const dir of ['relay', 'mock-server', 'shop-api']) {
      const server = tsconfig(`packages/${dir}/tsconfig.json`).compilerOptions!;
      expect(server.types, dir).toContain('node');
      expect(
        (server.lib ?? []).filter((l) => l.startsWith('DOM')),
        dir,
      ).toEqual([]);
    }
  });

  it("runs each package's tests as its own vitest project (`npm test -w <package>`)", () => {
    // every package but the tests' own kit has tests
    const tested = PACKAGE_DIRS.filter((d) => existsSync(join(root, 'packages', d, 'test')));
    expect(PACKAGE_DIRS.filter((d) => !tested.includes(d))).toEqual(['test-kit']);
    for (const dir of tested) {
      expect(existsSync(join(root, 'packages', dir, 'vitest.config.ts')), dir).toBe(true);
      expect(packages.get(`packages/${dir}`)!.scripts?.test, dir).toBe('vitest run');
    }
  });
});

describe('layout', () => {
  it('opens every source file with a one-line comment that says what it is', () => {
    const bare = files.filter((f) => !/^\/\/ \S/.test(readFileSync(join(root, f), 'utf8')));
    expect(bare).toEqual([]);
  });

  it('lets each folder import only the folders ARCHITECTURE.md allows it', () => {
    const strays: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      const allowed = MAY_IMPORT[from];
      if (!allowed) {
        strays.push(`${file}: its folder ${from} is not in the table`);
        continue;
      }
      for (const target of importsOf(file)) {
        if (folderOf(`${target}.ts`) === from || allowedBy(allowed, target, from)) continue;
        strays.push(`${file} imports ${target}`);
      }
    }
    expect(strays).toEqual([]);
  });

  it('keeps the engine out of the host bundle: src/ loads worker/ only as the worker entry or with worker: false', () => {
    const hostToEngine = files
      .filter((f) => named(f).startsWith('src/'))
      .flatMap((f) =>
        importsOf(f)
          .filter((t) => named(t).startsWith('worker/'))
          .map((t) => `${named(f)} -> ${named(t)}`),
      );
    expect(hostToEngine).toEqual(['src/connectEngine.ts -> worker/engine/createEngine']);
    expect(readFileSync(join(root, 'packages/shop-lookup/src/connectEngine.ts'), 'utf8')).toMatch(
      /await import\('\.\.\/worker\/engine\/createEngine'\)/,
    );
  });

  it('keeps the contract free of the host: src/protocol.ts reaches only the public types and the error class', () => {
    const reached = [...reachedFrom('packages/shop-lookup/src/protocol.ts')].map(named).sort();
    expect(reached).toEqual(['src/errors.ts', 'src/shopLookup.ts', 'src/toolTypes.ts', 'src/types.ts']);
  });

  it('crosses no package boundary with a relative import: a package is imported by its name', () => {
    const crossing = files.flatMap((f) =>
      importsOf(f)
        .filter((t) => packageOf(t) !== packageOf(f))
        .map((t) => `${f} -> ${t}`),
    );
    expect(crossing).toEqual([]);
  });

  it('imports packages by name downward only: the browser package and the relay onto the shop API client, never back', () => {
    const strays: string[] = [];
    for (const file of files) {
      const from = packageOf(file);
      const allowed = PACKAGE_MAY_IMPORT[from];
      if (!allowed) {
        strays.push(`${file}: its package ${from} is not in the table`);
        continue;
      }
      for (const s of specifiersOf(file).filter((x) => !x.startsWith('.'))) {
        const named = packageNamed(s);
        if (WORKSPACE_NAMES.has(named) && !allowed.includes(named)) strays.push(`${file} imports ${s}`);
      }
    }
    expect(strays).toEqual([]);
  });

  it("declares every package a package's code imports (a dependency or a peer; the bundled shop API client aside)", () => {
    const undeclared = new Set<string>();
    for (const file of files) {
      const from = packageOf(file);
      const pkg = from === rootPackage.name ? rootPackage : [...packages.values()].find((p) => p.name === from)!;
      const declared = { ...pkg.dependencies, ...pkg.peerDependencies };
      for (const s of specifiersOf(file).filter((x) => !x.startsWith('.') && !x.startsWith('node:'))) {
        const named = packageNamed(s);
        if (named === '@shop-lookup/shop-api' || named in declared) continue;
        undeclared.add(`${from}: ${named} (${file})`);
      }
    }
    expect([...undeclared]).toEqual([]);
  });

  it('keeps the shop API client unpublished and bundled: private, and no published package depends on it', () => {
    expect(packages.get('packages/shop-api')).toMatchObject({ name: '@shop-lookup/shop-api', private: true });
    for (const pkg of [rootPackage, ...packages.values()]) {
      expect({ ...pkg.dependencies, ...pkg.peerDependencies }, pkg.name).not.toHaveProperty('@shop-lookup/shop-api');
    }
  });

  it('has no import circle between folders (type-only imports count: a circle ties the halves together)', () => {
    // a circle inside one folder is one part's business; one that spans folders breaks the layering above
    const across = importCircles()
      .filter((group) => new Set(group.map(folderOf)).size > 1)
      .map((group) => `${group.length} files: ${group.join(', ')}`);
    expect(across).toEqual([]);
  });
});
