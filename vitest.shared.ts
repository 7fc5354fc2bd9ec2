// What every test project shares, the root's (vitest.config.ts) and each package's own (packages/*/vitest.config.ts):
// the packages by name as their sources, the timeouts, one file at a time; and a package's tests as a project.
import { fileURLToPath } from 'node:url';
import type { TestProjectInlineConfiguration } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export const sharedTest = {
  environment: 'node',
  // the packages by name, as their sources (their package.json "exports" name the built dist/)
  alias: [
    { find: /^shop-lookup$/, replacement: source('./packages/shop-lookup/src/index.ts') },
    { find: /^@shop-lookup\/relay$/, replacement: source('./packages/relay/src/index.ts') },
    { find: /^@shop-lookup\/mock-server$/, replacement: source('./packages/mock-server/src/index.ts') },
    { find: /^@shop-lookup\/mock-server\/msw$/, replacement: source('./packages/mock-server/src/msw/index.ts') },
  ],
  testTimeout: 20_000,
  // expect.poll waits up to 10 s (default 1 s): the two lanes share 2 cores (how fast is the bench's to say)
  expect: { poll: { timeout: 10_000 } },
  fileParallelism: false,
} satisfies TestProjectInlineConfiguration['test'];

/**
 * The tests of packages/<dir> (its test/ folder) as a project named after the folder; `skip`: files of it that the
 * root runs in a project of their own.
 * @example export default defineConfig(packageTests('relay'));
 */
export function packageTests(dir: string, skip: string[] = []) {
  return {
    root: source(`./packages/${dir}/`),
    test: { ...sharedTest, name: dir, include: ['test/**/*.test.ts'], exclude: ['**/node_modules/**', ...skip] },
  } satisfies TestProjectInlineConfiguration;
}
