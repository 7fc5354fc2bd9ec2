#!/usr/bin/env node
// `npm run test:quick`: the Node unit and integration tests of every package and of the root (the node lane of
// vitest.config.ts; the packed lane, which packs, installs and benchmarks, is left out), two files at a time. No
// browsers, no relay processes under real rate limits: `npm test` runs everything. Arguments pass on to vitest (a file
// filter, -t …).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { nodeProjectArgs } from './node-projects.mjs';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const child = spawn(
  process.execPath,
  [vitest, 'run', ...nodeProjectArgs(), '--fileParallelism', '--maxWorkers', '2', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
