// The layout of ARCHITECTURE.md, checked: what each folder may import, and the one-line header every file opens with.
import { readdirSync, readFileSync } from 'node:fs';
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

/** The folder a file belongs to in ARCHITECTURE.md's table: `worker/sync/direct`, `worker/api`, `relay`, ... */
function folderOf(file: string): string {
  // a package's source (packages/<name>/src/...) reads as <name>/...
  const parts = file.replace(/^packages\/([^/]+)\/src\//, '$1/').split('/');
  if (parts[0] === 'worker') {
    if (parts.length === 2) return 'worker';
    if (parts[1] === 'sync' && parts.length > 3) return parts.slice(0, 3).join('/');
    return parts.slice(0, 2).join('/');
  }
  if (parts[0] === 'src' && parts[1] === 'react') return 'src/react';
  if (parts[0] === 'mock-server' && parts[1] === 'msw') return 'mock-server/msw';
  return parts[0]!;
}

/** Each relative import of `file` (static, dynamic and `typeof import`), resolved to a path from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => normalize(join(dirname(file), m[1]!)).split('\\').join('/'));
}

/**
 * Which folders each folder may import (besides itself). The engine's folders are layered: a folder imports
 * only folders above it in this list, never one below (see ARCHITECTURE.md, "What each folder may import").
 */
const MAY_IMPORT: Record<string, string[]> = {
  src: ['src/protocol (types and the error class)', 'worker/engine (createEngine, loaded only with worker: false)'],
  'src/react': ['src'],
  'shop-api': [],
  'shop-api/api': ['shop-api', 'shop-api/records'],
  'shop-api/records': ['shop-api'],
  'worker/store': ['src/protocol', 'worker/records'],
  'worker/tabs': ['src/protocol'],
  'worker/sync': ['src/protocol', 'worker/records', 'worker/api', 'worker/store', 'worker/tabs', 'worker/lookups', 'worker/sync/direct', 'worker/sync/relay'],
  'worker/sync/direct': ['src/protocol', 'worker/records', 'worker/api', 'worker/store', 'worker/sync'],
  'worker/sync/relay': ['src/protocol', 'worker/records', 'worker/api', 'worker/store', 'worker/tabs', 'worker/sync'],
  'worker/lookups': ['src/protocol', 'worker/records', 'worker/api', 'worker/store', 'worker/tabs', 'worker/sync', 'worker/sync/direct'],
  'worker/coupon': ['src/protocol', 'worker/records', 'worker/api', 'worker/store'],
  'worker/engine': ['src/protocol', 'worker/records', 'worker/api', 'worker/store', 'worker/tabs', 'worker/sync', 'worker/sync/direct', 'worker/sync/relay', 'worker/lookups', 'worker/coupon'],
  worker: ['src/protocol', 'worker/engine'],
  proxy: ['relay'],
  relay: [],
  'mock-server': [],
  'mock-server/msw': ['mock-server'],
};

/** Whether `target` (a path from the root, without extension) lies in what `allowed` names. */
function allowedBy(allowed: string[], target: string): boolean {
  return allowed.some((a) => {
    const path = a.split(' ')[0]!;
    if (path === 'src/protocol') return target === 'src/protocol';
    if (path === 'worker/engine') return folderOf(`${target}.ts`) === 'worker/engine';
    return folderOf(`${target}.ts`) === path;
  });
}

const files = ['src', 'worker', 'proxy', 'packages/relay/src', 'packages/mock-server/src', 'packages/shop-api/src'].flatMap(sources);

/** The source file an import names (`./x` is `./x.ts`, `./x.tsx` or `./x/index.ts`), if it is one of ours. */
const known = new Set(files);
const fileOf = (target: string) => [`${target}.ts`, `${target}.tsx`, `${target}/index.ts`].find((f) => known.has(f));
const graph = new Map(files.map((f) => [f, importsOf(f).map(fileOf).filter((t): t is string => t !== undefined)]));

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
        if (folderOf(`${target}.ts`) === from || allowedBy(allowed, target)) continue;
        strays.push(`${file} imports ${target}`);
      }
    }
    expect(strays).toEqual([]);
  });

  it('keeps the engine out of the host bundle: src/ loads worker/ only as the worker entry or with worker: false', () => {
    const hostToEngine = files
      .filter((f) => f.startsWith('src/'))
      .flatMap((f) => importsOf(f).filter((t) => t.startsWith('worker/')).map((t) => `${f} -> ${t}`));
    expect(hostToEngine).toEqual(['src/connectEngine.ts -> worker/engine/createEngine']);
    expect(readFileSync(join(root, 'src/connectEngine.ts'), 'utf8')).toMatch(/await import\('\.\.\/worker\/engine\/createEngine'\)/);
  });

  it('keeps the contract free of the host: src/protocol.ts reaches only the public types and the error class', () => {
    const reached = [...reachedFrom('src/protocol.ts')].sort();
    expect(reached).toEqual(['src/errors.ts', 'src/shopLookup.ts', 'src/types.ts']);
  });

  it('has no import circle between folders (type-only imports count: a circle ties the halves together)', () => {
    // a circle inside one folder is one part's business; one that spans folders breaks the layering above
    const across = importCircles()
      .filter((group) => new Set(group.map(folderOf)).size > 1)
      .map((group) => `${group.length} files: ${group.join(', ')}`);
    expect(across).toEqual([]);
  });
});
