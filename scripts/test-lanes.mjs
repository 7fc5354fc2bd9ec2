#!/usr/bin/env node
// `npm test`'s last step: the test projects of vitest.config.ts in three lanes side by side: the browser tests on
// Chromium, then the Node tests of every package and of the root (Redis, relays in this process; two files at a time,
// as `npm run test:quick`); the browser tests on Firefox ESR and WebKitGTK; the packed package in users' apps and the
// smoke bench (two files at a time). Most of each lane's time is spent waiting on a browser, a server, an install or a
// timer (a run on 2 cores kept them 60 % busy with one file at a time a lane). Then, alone, the
// tests under the mock's real rate limits (relay processes, the proxy, the engine's limiter), which a process starved
// of CPU would fail. Each line is prefixed with its lane; the exit code is 1 if a lane failed. Arguments (a file
// filter, -t …) run one plain `vitest run` with them instead.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { nodeProjectArgs } from './node-projects.mjs';

const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const args = process.argv.slice(2);

function run(lane, extra, env = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, [vitest, 'run', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) =>
      (stream === child.stdout ? process.stdout : process.stderr).write(lane ? `[${lane}] ${line}\n` : `${line}\n`),
    );
  }
  return new Promise((resolve) => {
    child.on('close', (code, signal) =>
      resolve({ lane, code: code ?? (signal ? 1 : 0), seconds: (performance.now() - started) / 1000 }),
    );
  });
}

// the browser tests' engines (E2E_ENGINES, all three when unset): Chromium's suites in one lane, Firefox's and
// WebKit's in another
const ENGINES = ['chromium', 'firefox', 'webkit'];
const asked = (process.env.E2E_ENGINES ?? '')
  .split(',')
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);
const engines = asked.length > 0 ? ENGINES.filter((e) => asked.includes(e)) : ENGINES;
const others = engines.filter((e) => e !== 'chromium');
const browsers = (list) =>
  run(`browsers:${list.join('+')}`, ['--project', 'browsers'], { E2E_ENGINES: list.join(',') });

/** Two test files of the lane at once (vitest.shared.ts runs one at a time by default). */
const TWO_AT_A_TIME = ['--fileParallelism', '--maxWorkers', '2'];

/** Runs `steps` one after the other (a lane of several vitest runs). */
async function lane(...steps) {
  const out = [];
  for (const step of steps) out.push(await step());
  return out;
}

const results =
  args.length > 0
    ? [await run('', args)]
    : [
        ...(
          await Promise.all([
            lane(...(engines.includes('chromium') ? [() => browsers(['chromium'])] : []), () =>
              run('node', [...nodeProjectArgs(), ...TWO_AT_A_TIME]),
            ),
            lane(...(others.length > 0 ? [() => browsers(others)] : [])),
            lane(() => run('packed', ['--project', 'packed', ...TWO_AT_A_TIME])),
          ])
        ).flat(),
        // then alone: relay processes under the mock's real rate limits (vitest.config.ts, test.projects)
        await run('processes', ['--project', 'processes']),
      ];
if (args.length === 0) {
  for (const r of results)
    console.log(`test lane ${r.lane}: ${r.code === 0 ? 'passed' : 'FAILED'} in ${r.seconds.toFixed(0)} s`);
}
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
