#!/usr/bin/env node
// Build step after `tsc -p tsconfig.build.json` (part of `npm run build`): makes dist/types/ publishable.
// 1. Relative specifiers get their `.js` extension ('./types' → './types.js', './dir' → './dir/index.js'):
//    without it, TypeScript consumers on `moduleResolution: node16/nodenext` cannot follow the imports and the
//    types silently become `any` (with skipLibCheck). `bundler` resolution accepts both forms.
// 2. A private workspace package the build bundles (@shop-lookup/shop-api: its source is compiled along, see the
//    package's tsconfig.build.json) is imported by a relative path into its emitted declarations: a consumer cannot
//    install it.
// 3. Only the declaration files reachable from the package's `exports` entries are kept; the engine's internal
//    declarations are not part of the API and would only bloat the tarball.
// Usage: node scripts/finish-types.mjs <package directory> (packages/<name>, from the repository root)
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (!process.argv[2]) throw new Error('finish-types: name the package directory (packages/<name>)');
const root = resolve(repo, process.argv[2]);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// where tsc wrote the declarations, and from which source root (the package's tsconfig.build.json)
const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')).compilerOptions;
const typesDir = resolve(root, build.outDir);
const sourceRoot = resolve(root, build.rootDir);

/** The private workspace packages, by name: the declaration of each one's entry as this build emitted it. */
const bundled = new Map();
for (const dir of readdirSync(join(repo, 'packages'))) {
  const file = join(repo, 'packages', dir, 'package.json');
  if (!existsSync(file)) continue;
  const other = JSON.parse(readFileSync(file, 'utf8'));
  // (the private test kit has no entry of its own: no package's build imports it)
  if (!other.private || typeof other.exports?.['.'] !== 'string') continue;
  const entry = join(repo, 'packages', dir, other.exports['.'].replace(/\.ts$/, '.d.ts'));
  bundled.set(other.name, join(typesDir, relative(sourceRoot, entry)));
}

const entries = Object.values(pkg.exports)
  .map((e) => (typeof e === 'object' && e ? e.types : undefined))
  .filter((t) => typeof t === 'string')
  .map((t) => resolve(root, t));

// `from './x'`, `import './x'`, `import('./x')` in emitted declarations (and the bundled packages' names)
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*|@shop-lookup\/[^'"]+)\2/g;

function targetOf(file, spec) {
  if (!spec.startsWith('.')) {
    const entry = bundled.get(spec);
    if (entry === undefined) return { path: undefined, spec }; // a published package: imported by its name
    const rel = relative(dirname(file), entry).replace(/\.d\.ts$/, '.js');
    return { path: entry, spec: rel.startsWith('.') ? rel : `./${rel}` };
  }
  const base = resolve(dirname(file), spec.replace(/\.js$/, ''));
  if (existsSync(`${base}.d.ts`)) return { path: `${base}.d.ts`, spec: spec.endsWith('.js') ? spec : `${spec}.js` };
  if (existsSync(join(base, 'index.d.ts')))
    return { path: join(base, 'index.d.ts'), spec: `${spec.replace(/\/$/, '')}/index.js` };
  return null;
}

const keep = new Set();
const queue = [...entries];
for (const entry of entries) {
  if (!existsSync(entry))
    throw new Error(`finish-types: ${relative(root, entry)} (an exports "types" path) was not emitted`);
}
while (queue.length) {
  const file = queue.pop();
  if (keep.has(file)) continue;
  keep.add(file);
  const text = readFileSync(file, 'utf8');
  const out = text.replace(SPECIFIER, (_all, lead, quote, spec) => {
    const target = targetOf(file, spec);
    if (!target || (target.path !== undefined && !existsSync(target.path))) {
      throw new Error(`finish-types: ${relative(root, file)} imports ${spec}, which has no declaration file`);
    }
    if (target.path !== undefined) queue.push(target.path);
    return `${lead}${quote}${target.spec}${quote}`;
  });
  if (out !== text) writeFileSync(file, out);
}

let removed = 0;
(function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
    } else if (!keep.has(path.replace(/\.map$/, ''))) {
      rmSync(path);
      removed++;
    }
  }
})(typesDir);

console.log(
  `finish-types: ${keep.size} declaration files kept (from ${entries.length} entries), ${removed} files dropped`,
);
