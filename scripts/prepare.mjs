#!/usr/bin/env node
// npm's `prepare` step. Installed from a git commit (`npm install git+https://…#<commit>`), npm clones the package,
// installs its devDependencies and runs only `prepare` before packing it, so the package is built here. In a
// checkout of its own (`npm ci` / `npm install` where you cloned it) npm runs `prepare` too: nothing is built then
// (`npm run build` when you need dist/). npm runs it in the package's directory; INIT_CWD is where the user ran npm.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const here = process.cwd();
const asked = process.env.INIT_CWD ? resolve(process.env.INIT_CWD) : here;
if (asked !== here) {
  console.log('shop-lookup: building the package (installed from source)');
  execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
}
