// The test projects of every package and of the root, for vitest (the packages build with their own
// packages/*/vite.config.ts, the demo with demo/vite.config.ts). Each package's tests are a project named after its
// folder (shop-lookup, relay, mock-server, shop-api: packages/<name>/test/), which `npm test -w <package>` also runs
// alone (packages/<name>/vitest.config.ts); the root's own tests are `workspace` (layout, engines, error codes, the
// docs' storefront recipe), `browsers` (test/e2e/) and `packed` (test/consumers/ and the smoke bench).
import { defineConfig } from 'vitest/config';
import { packageTests, sharedTest } from './vitest.shared.ts';

// under the mock's real rate limits, run alone (see test.projects): the relay as processes, the proxy and the
// engine's own limiter; by package
const PROCESS_TESTS: Record<string, string[]> = {
  'shop-lookup': [
    'test/relayScale.test.ts',
    'test/relayHubScale.test.ts',
    'test/rateLimiter.test.ts',
    'test/relayUsesProcesses.test.ts',
  ],
  relay: ['test/proxy.test.ts'],
};

// e2e files that drive Chromium only (what they check is the command's, not an engine's): left out of a run whose
// E2E_ENGINES has no Chromium, which would find no test in them
const CHROMIUM_ONLY_E2E = ['test/e2e/demoCommand.test.ts'];
const e2eEngines = process.env.E2E_ENGINES?.toLowerCase() ?? '';

// what packs, installs or benchmarks: the packed tarballs in users' apps, the smoke bench
const PACKED_TESTS = ['test/consumers/**/*.test.ts', 'test/bench.test.ts'];

export default defineConfig({
  test: {
    ...sharedTest,
    // Lanes (scripts/test-lanes.mjs runs them side by side, each one file at a time): the browser tests, the
    // packed package in users' apps (with the smoke bench), and the Node tests of every package and of the root;
    // then, alone on the machine, the process tests, whose upstream rate limits are real (a relay process starved of
    // CPU by a browser sends its request late and meets a 429 it never earned). `vitest run` alone runs them all,
    // one after the other.
    projects: [
      ...['shop-lookup', 'relay', 'mock-server', 'shop-api'].map((dir) => packageTests(dir, PROCESS_TESTS[dir])),
      {
        extends: true,
        test: {
          name: 'workspace',
          include: ['test/*.test.ts'],
          exclude: [...PACKED_TESTS, '**/node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'browsers',
          include: ['test/e2e/**/*.test.ts'],
          exclude: e2eEngines && !e2eEngines.includes('chromium') ? CHROMIUM_ONLY_E2E : [],
        },
      },
      { extends: true, test: { name: 'packed', include: PACKED_TESTS } },
      {
        extends: true,
        test: {
          name: 'processes',
          include: Object.entries(PROCESS_TESTS).flatMap(([dir, files]) => files.map((f) => `packages/${dir}/${f}`)),
        },
      },
    ],
  },
});
