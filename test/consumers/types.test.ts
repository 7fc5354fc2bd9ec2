// A TypeScript app type-checks against the packed tarball's published .d.ts, under moduleResolution `bundler` and
// `node16`: right calls compile with the real types (not `any`), and each wrong call is a type error. A Node server
// (server/) type-checks the relay, the proxy and the mock server with no DOM library at all.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installFixture, packedTarballs, printTimings, readmeExample, timed, type Fixture } from './harness';

let app: Fixture;

beforeAll(async () => {
  const { shopLookup, relay, mockServer } = await timed('pack', packedTarballs);
  // the README's till example (src/pos.ts) and docs/errors.md's switch over the codes (src/errorText.ts) along
  const examples = {
    'src/pos.ts': await readmeExample('pos.ts'),
    'src/errorText.ts': await readmeExample('errorText.ts'),
  };
  app = await timed('install', async () => installFixture('ts-consumer', [shopLookup, relay, mockServer], examples));
}, 600_000);

afterAll(async () => {
  await app?.remove();
  printTimings('types.test.ts');
}, 60_000);

async function tsc(project: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await app.run('node', ['node_modules/typescript/bin/tsc', '-p', project, '--pretty', 'false']);
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout ?? error) };
  }
}

describe('a TypeScript app against the published types', { timeout: 120_000 }, () => {
  for (const resolution of ['bundler', 'node16']) {
    it(`moduleResolution ${resolution}: every entry point resolves, right calls compile, wrong calls are errors`, async () => {
      const { ok, output } = await timed(`tsc ${resolution}`, () => tsc(`tsconfig.${resolution}.json`));
      expect(output).toBe('');
      expect(ok).toBe(true);
    });
  }

  it('the server packages (relay, proxy, mock server) type-check in a Node project without the DOM library', async () => {
    const { ok, output } = await timed('tsc server', () => tsc('tsconfig.server.json'));
    expect(output).toBe('');
    expect(ok).toBe(true);
  });

  it('each @ts-expect-error line really is an error: without the directives, tsc reports one error per line', async () => {
    const file = join(app.dir, 'src/wrong.ts');
    const source = await readFile(file, 'utf8');
    const expected = source.match(/^\/\/ @ts-expect-error/gm)?.length ?? 0;
    expect(expected).toBeGreaterThanOrEqual(10);
    await writeFile(file, source.replace(/^\/\/ @ts-expect-error/gm, '// expected error:'));
    const { ok, output } = await timed('tsc without directives', () => tsc('tsconfig.bundler.json'));
    expect(ok).toBe(false);
    const errorLines = new Set([...output.matchAll(/^src\/wrong\.ts\((\d+),\d+\): error/gm)].map((m) => m[1]));
    expect(errorLines.size, output).toBe(expected);
    expect(output).not.toMatch(/^src\/(?!wrong\.ts)/m);
  });
});
