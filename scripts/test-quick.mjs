#!/usr/bin/env node
// `npm run test:quick`: the Node unit and integration tests of every package (the node lane of vite.config.ts
// without the consumer tests, the smoke bench and the Node example, which pack, install or benchmark), two files at
// a time. No browsers, no relay processes under real rate limits: `npm test` runs everything. Arguments pass on to
// vitest (a file filter, -t …).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const child = spawn(process.execPath, [vitest, 'run', '--project', 'node', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, TEST_QUICK: '1' },
});
child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
