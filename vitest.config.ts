// The test projects of every package, for vitest (the packages build with their own packages/*/vite.config.ts, the
// demo with demo/vite.config.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// under the mock's real rate limits, run alone (see test.projects): the relay as processes, the proxy and the
// engine's own limiter
const PROCESS_TESTS = [
  'test/relayScale.test.ts',
  'test/relayHubScale.test.ts',
  'test/relayUsesProcesses.test.ts',
  'test/proxy.test.ts',
  'test/rateLimiter.test.ts',
];

// what packs, installs or benchmarks: the packed tarballs in users' apps, the smoke bench
const PACKED_TESTS = ['test/consumers/**/*.test.ts', 'test/bench.test.ts'];

export default defineConfig({
  test: {
    environment: 'node',
    // the packages by name, as their sources (their package.json "exports" name the built dist/)
    alias: [
      {
        find: /^@shop-lookup\/relay$/,
        replacement: fileURLToPath(new URL('./packages/relay/src/index.ts', import.meta.url)),
      },
      {
        find: /^@shop-lookup\/mock-server$/,
        replacement: fileURLToPath(new URL('./packages/mock-server/src/index.ts', import.meta.url)),
      },
      {
        find: /^@shop-lookup\/mock-server\/msw$/,
        replacement: fileURLToPath(new URL('./packages/mock-server/src/msw/index.ts', import.meta.url)),
      },
    ],
    testTimeout: 20_000,
    // expect.poll waits up to 10 s (default 1 s): the two lanes share 2 cores (how fast is the bench's to say)
    expect: { poll: { timeout: 10_000 } },
    // Lanes (scripts/test-lanes.mjs runs them side by side, each one file at a time): the browser tests, the
    // packed package in users' apps (with the smoke bench), and everything else; then, alone on the machine, the
    // relay's process tests, whose upstream rate limits are real (a relay process starved of CPU by a browser sends
    // its request late and meets a 429 it never earned). `vitest run` alone runs all four, one after the other.
    projects: [
      { extends: true, test: { name: 'browsers', include: ['test/e2e/**/*.test.ts'], fileParallelism: false } },
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', ...PROCESS_TESTS, ...PACKED_TESTS, '**/node_modules/**'],
          fileParallelism: false,
        },
      },
      { extends: true, test: { name: 'packed', include: PACKED_TESTS, fileParallelism: false } },
      { extends: true, test: { name: 'processes', include: PROCESS_TESTS, fileParallelism: false } },
    ],
  },
});
