// The packed tarballs themselves: what a registry user downloads. shop-lookup: publishable (no `private`, a version,
// a license, a repository); every `exports` entry has its ESM build and types, and no source maps ship
// (docs/embedding.md says why); a README and the LICENSE; no tests; `sideEffects` names only the worker entry; the
// browser entry keeps the literal `new Worker(new URL('./worker.js', import.meta.url))` that bundlers follow; no
// server library is a dependency or a peer. @shop-lookup/relay and @shop-lookup/mock-server: publishable the same way,
// the relay's server libraries real dependencies and its bin a file with a shebang. None names the private
// @shop-lookup/shop-api: both builds bundle it.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { rolldown } from 'rolldown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedTarballs, printTimings, repoRoot, timed } from './harness';

/** The server libraries: dependencies of @shop-lookup/relay, never of shop-lookup (not even optional peers). */
const SERVER_LIBRARIES = ['pino', 'prom-client', 'rate-limiter-flexible', 'redis'];

type Manifest = {
  name: string;
  exports: Record<string, { types: string; default: string } | string>;
  files: string[];
  sideEffects: string[] | boolean;
  main?: string;
  types: string;
  bin?: Record<string, string>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  private?: boolean;
  version: string;
  license: string;
  repository: { type: string; url: string };
  engines: { node: string };
};

interface Unpacked {
  dir: string;
  files: string[];
  pkg: Manifest;
  read(file: string): Promise<string>;
}

async function unpack(tarball: string, into: string): Promise<Unpacked> {
  const dir = await mkdtemp(join(into, 'pkg-'));
  await run('tar', ['-xzf', tarball, '-C', dir]);
  const files = (await run('tar', ['-tzf', tarball])).stdout
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
  const pkg = JSON.parse(await readFile(join(dir, 'package/package.json'), 'utf8')) as Manifest;
  return { dir, files, pkg, read: (file) => readFile(join(dir, 'package', file), 'utf8') };
}

const run = promisify(execFile);
let tmp: string;
let root: Unpacked;
let relay: Unpacked;
let mock: Unpacked;
// shop-lookup's, as the tests below read it
let dir: string;
let files: string[];
let pkg: Manifest;

beforeAll(async () => {
  const tarballs = await timed('pack', packedTarballs);
  tmp = await mkdtemp(join(tmpdir(), 'shop-lookup-tarball-'));
  [root, relay, mock] = await Promise.all([
    unpack(tarballs.shopLookup, tmp),
    unpack(tarballs.relay, tmp),
    unpack(tarballs.mockServer, tmp),
  ]);
  ({ dir, files, pkg } = root);
}, 600_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
  printTimings('package.test.ts');
});

function expectPublishable(p: Unpacked, name: string): void {
  expect(p.pkg.name).toBe(name);
  expect(p.pkg.private, name).toBeUndefined();
  expect(p.pkg.version, name).toMatch(/^\d+\.\d+\.\d+/);
  expect(p.pkg.license, name).toBe('MIT');
  expect(p.pkg.repository, name).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\//) });
  expect(p.pkg.engines, name).toEqual({ node: '>=20.19.0' });
  expect(p.files, name).toContain('LICENSE');
  expect(p.files, name).toContain('README.md');
}

/** Every exports entry has its ESM file and its types in the tarball; no source maps ship. */
async function expectEntries(p: Unpacked, names: string[]): Promise<void> {
  const entries = Object.entries(p.pkg.exports).filter(([k]) => k !== './package.json');
  expect(entries.map(([k]) => k).sort()).toEqual(names);
  for (const [name, target] of entries) {
    if (typeof target === 'string') throw new Error(`${name}: expected { types, default }`);
    const js = target.default.replace(/^\.\//, '');
    const types = target.types.replace(/^\.\//, '');
    expect(p.files, name).toContain(js);
    expect(p.files, name).toContain(types);
    expect(await p.read(js), name).toMatch(/^import |^export |^\/\//m);
  }
  expect(p.files.filter((f) => f.endsWith('.map'))).toEqual([]);
  expect(p.files).toContain(p.pkg.types.replace(/^\.\//, ''));
}

describe('the packed tarball', () => {
  it('is publishable: no private flag, a version, a license (and its text), a repository', () => {
    expectPublishable(root, 'shop-lookup');
  });

  it('has an ESM build and types for every exports entry, and no source maps', async () => {
    await expectEntries(root, ['.', './devtools', './devtools/react', './react', './vue', './worker']);
    expect(files).toContain(pkg.main!.replace(/^\.\//, ''));
  });

  it('has the README and no tests, sources or fixtures', () => {
    expect(files).toContain('README.md');
    expect(
      files.filter((f) => /(^|\/)test\/|\.test\.|\.spec\.|^src\/|^worker\/|^demo\/|^bench\/|^examples\//.test(f)),
    ).toEqual([]);
    expect(files.every((f) => ['README.md', 'LICENSE', 'package.json'].includes(f) || f.startsWith('dist/'))).toBe(
      true,
    );
  });

  it('declares side effects for the worker entry only', () => {
    expect((pkg.sideEffects as string[]).filter((f) => f.startsWith('./dist/'))).toEqual(['./dist/worker.js']);
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
    const chunks = await Promise.all(
      files.filter((f) => /^dist\/[^/]+\.js$/.test(f)).map((f) => readFile(join(dir, 'package', f), 'utf8')),
    );
    for (const dep of Object.keys(pkg.dependencies!)) {
      // statically, or with import() as the in-memory store that stands in where IndexedDB cannot be used
      expect(
        chunks.some((c) => c.includes(`from "${dep}`) || c.includes(`import("${dep}")`)),
        `${dep} imported by name`,
      ).toBe(true);
    }
    // no browser file names a server package or library
    for (const dep of [...SERVER_LIBRARIES, '@shop-lookup/relay', '@shop-lookup/mock-server']) {
      expect(
        chunks.some((c) => c.includes(`"${dep}`)),
        `${dep} kept out of the browser entries`,
      ).toBe(false);
    }
  });

  it("leaves the engine for this thread out of an app's build that defines __SHOP_LOOKUP_IN_THREAD__ as false, and only then", async () => {
    // the main entry bundled as an app's bundler does (rolldown, Vite 8's), its dependencies left to the app: with no
    // define its `worker: false` engine is a chunk of the build; defined false, the import() and the chunk are gone
    const bundle = async (define?: Record<string, string>) => {
      const build = await rolldown({
        input: join(dir, 'package/dist/index.js'),
        external: (id) => !/^[./]/.test(id),
        logLevel: 'silent',
        ...(define && { transform: { define } }),
      });
      const { output } = await build.generate({ format: 'esm' });
      await build.close();
      return output.flatMap((o) => (o.type === 'chunk' ? [o.code] : [])).join('\n');
    };
    const engine = /\bfunction createEngine\(/;
    const asIs = await bundle();
    expect(asIs).toMatch(engine);
    expect(await bundle({ __SHOP_LOOKUP_IN_THREAD__: 'true' })).toMatch(engine);
    const lean = await bundle({ __SHOP_LOOKUP_IN_THREAD__: 'false' });
    expect(lean).not.toMatch(engine);
    expect(lean).not.toMatch(/import\(/);
    // what `worker: false` meets then: bad_options, naming the flag
    expect(lean).toMatch(
      /bad_options["'`],\s*["'`]`worker: false` \(or no Worker\) needs __SHOP_LOOKUP_IN_THREAD__ not/,
    );
  });

  it('loads fake-indexeddb only lazily, for the engine without a usable IndexedDB: no browser file imports it statically', async () => {
    const browserFiles = files.filter((f) => /^dist\/[^/]+\.js$/.test(f));
    const code = await Promise.all(browserFiles.map((f) => root.read(f)));
    expect(code.filter((c) => /from "fake-indexeddb/.test(c))).toEqual([]);
    expect(code.some((c) => c.includes('import("fake-indexeddb")'))).toBe(true);
  });

  it('has no server library or server package as a dependency or a peer: a browser app installs none', () => {
    for (const dep of [
      ...SERVER_LIBRARIES,
      'msw',
      '@shop-lookup/relay',
      '@shop-lookup/mock-server',
      '@shop-lookup/shop-api',
    ]) {
      expect(pkg.dependencies ?? {}, dep).not.toHaveProperty(dep);
      expect(pkg.peerDependencies ?? {}, dep).not.toHaveProperty(dep);
    }
    expect(pkg.bin, 'the relay command moved to @shop-lookup/relay').toBeUndefined();
  });

  it('keeps React and Vue out of the main entry and msw out of the browser files: optional peers, never bundled', async () => {
    expect(pkg.peerDependencies).toEqual({ react: '>=18.0.0', vue: '>=3.3.0' });
    expect(pkg.peerDependenciesMeta).toEqual({ react: { optional: true }, vue: { optional: true } });
    expect(Object.keys(pkg.dependencies!)).not.toContain('react');
    expect(Object.keys(pkg.dependencies!)).not.toContain('vue');
    const browserFiles = files.filter((f) => /^dist\/[^/]+\.js$/.test(f));
    for (const f of browserFiles) {
      const code = await readFile(join(dir, 'package', f), 'utf8');
      expect(code, f).not.toMatch(/from "msw/);
      if (f !== 'dist/react.js' && f !== 'dist/devtools-react.js')
        expect(code, f).not.toMatch(/from "react|useSyncExternalStore/);
      if (f !== 'dist/vue.js') expect(code, f).not.toMatch(/from "vue"/);
    }
    const hooks = await readFile(join(dir, 'package/dist/react.js'), 'utf8');
    expect(hooks).toMatch(/from "react"/);
    expect(hooks).not.toMatch(/function createElement|__SECRET_INTERNALS|ReactSharedInternals/);
    const composables = await readFile(join(dir, 'package/dist/vue.js'), 'utf8');
    expect(composables).toMatch(/from "vue"/);
    expect(composables).not.toMatch(/function createRenderer|__VUE_OPTIONS_API__/);
    expect(await mock.read('dist/msw.js')).toMatch(/from "msw"/);
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

describe('the packed @shop-lookup/relay', () => {
  it('is publishable, with its README and LICENSE, and nothing but its build besides', () => {
    expectPublishable(relay, '@shop-lookup/relay');
    expect(
      relay.files.every((f) => ['README.md', 'LICENSE', 'package.json'].includes(f) || f.startsWith('dist/')),
    ).toBe(true);
  });

  it('has an ESM build and types for its entry, and no source maps', async () => {
    await expectEntries(relay, ['.']);
  });

  it('has the server libraries as real dependencies, imported by name (one install runs the command)', async () => {
    expect(Object.keys(relay.pkg.dependencies!).sort()).toEqual([...SERVER_LIBRARIES, 'zod'].sort());
    expect(relay.pkg.peerDependencies).toBeUndefined();
    const code = (await Promise.all(relay.files.filter((f) => f.endsWith('.js')).map((f) => relay.read(f)))).join('\n');
    for (const dep of SERVER_LIBRARIES) expect(code, dep).toMatch(new RegExp(`from "${dep}"|import\\("${dep}"\\)`));
  });

  it('has the shop-lookup-relay command in its dist, a file that starts with a shebang', async () => {
    expect(relay.pkg.bin).toEqual({ 'shop-lookup-relay': 'dist/shop-lookup-relay.js' });
    expect(await relay.read('dist/shop-lookup-relay.js')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('ships the docs its command points to (dist/docs/relay.md), whose links lead to a shipped page or the repository', async () => {
    const pages = relay.files.filter((f) => f.startsWith('dist/docs/'));
    expect(pages).toEqual(
      expect.arrayContaining([
        'dist/docs/relay.md',
        'dist/docs/hub.md',
        'dist/docs/feed-protocol.md',
        'dist/docs/errors.md',
      ]),
    );
    expect(await relay.read('dist/docs/relay.md')).toMatch(/^## Deploy$[\s\S]*^\| `CORS_ORIGINS`/m);
    for (const page of pages) {
      for (const [, target] of (await relay.read(page)).matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
        if (/^https:\/\//.test(target!))
          expect(target, page).toMatch(/^https:\/\/github\.com\/shop-lookup\/shop-lookup\/blob\/main\//);
        else expect(pages, `${page} links ${target}`).toContain(`dist/docs/${target}`);
      }
    }
  });
});

describe('the packed @shop-lookup/mock-server', () => {
  it('is publishable, with its README and LICENSE', () => {
    expectPublishable(mock, '@shop-lookup/mock-server');
  });

  it('has an ESM build and types for both entries, and no source maps; msw an optional peer', async () => {
    await expectEntries(mock, ['.', './msw']);
    expect(mock.pkg.peerDependencies).toEqual({ msw: '^2.0.0' });
    expect(mock.pkg.peerDependenciesMeta).toEqual({ msw: { optional: true } });
    expect(mock.pkg.dependencies).toBeUndefined();
  });
});

describe('installing the three tarballs', () => {
  it('runs no script and warns about none: no manifest carries an install-time script (preinstall, install, postinstall, prepare)', async () => {
    for (const p of [root, relay, mock]) {
      const scripts = Object.keys(p.pkg.scripts ?? {});
      expect(
        scripts.filter((name) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(name)),
        p.pkg.name,
      ).toEqual([]);
    }
    // what a user sees: npm install of the tarballs, at npm's usual log level (npm names every install script it met)
    const app = await mkdtemp(join(tmp, 'install-'));
    await writeFile(
      join(app, 'package.json'),
      JSON.stringify({ name: 'install-check', private: true, type: 'module' }),
    );
    const tarballs = await packedTarballs();
    const { stderr } = await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        tarballs.shopLookup,
        tarballs.relay,
        tarballs.mockServer,
      ],
      {
        cwd: app,
        timeout: 300_000,
        maxBuffer: 64 << 20,
      },
    );
    expect(stderr).not.toMatch(/install-scripts|prepare/);
  }, 300_000);

  it("names in the README's install line every dependency that comes along, and no doc asks to install one again", async () => {
    const readme = await root.read('README.md');
    const line = readme.split('\n').find((l) => l.startsWith('npm install shop-lookup '))!;
    for (const dep of Object.keys(pkg.dependencies!)) expect(line, dep).toContain(dep);
    const docs = await Promise.all(
      ['README.md', 'docs/embedding.md', 'docs/node.md', 'docs/testing-your-app.md'].map((f) =>
        readFile(join(repoRoot, f), 'utf8'),
      ),
    );
    for (const dep of Object.keys(pkg.dependencies!)) {
      expect(
        docs.filter((text) => new RegExp(`npm (install|i)( -D)?( [\\w@/.-]+)* ${dep}\\b`).test(text)),
        dep,
      ).toEqual([]);
    }
  });
});

describe('the private @shop-lookup/shop-api', () => {
  it('is bundled into each package: no file of any tarball names it (a consumer could not install it)', async () => {
    for (const p of [root, relay, mock]) {
      const named = [];
      for (const f of p.files.filter((file) => /\.(js|ts|json)$/.test(file))) {
        // (a package.json may name it among its devDependencies, which a consumer never installs)
        const text = f === 'package.json' ? JSON.stringify({ ...p.pkg, devDependencies: undefined }) : await p.read(f);
        if (text.includes('@shop-lookup/shop-api')) named.push(f);
      }
      expect(named, p.pkg.name).toEqual([]);
    }
  });
});
