#!/usr/bin/env node
// Makes sure the multi-instance relay tests have a real redis-server to start (packages/test-kit/src/redisServer.ts
// runs it on a free loopback port): REDIS_SERVER_PATH, or `redis-server` on PATH, installed with apt-get when missing
// (as root, or through sudo). Exit code 1, with what to install, when it is missing and cannot be installed.
import { aptInstall, executable, has } from './system-packages.mjs';

const PACKAGES = ['redis-server'];

const custom = process.env.REDIS_SERVER_PATH;
if (custom) {
  if (executable(custom)) process.exit(0);
  console.error(
    `ensure-redis: REDIS_SERVER_PATH=${custom} is not an executable file. Point it at a redis-server binary, or unset it to use redis-server from PATH.`,
  );
  process.exit(1);
}

if (!has('redis-server')) {
  console.log('ensure-redis: redis-server is missing; installing it (the relay tests start their own on a free port)…');
  // The Debian package also starts a system service on port 6379; the tests never use it.
  if (!(aptInstall(PACKAGES, { label: 'ensure-redis' }) && has('redis-server'))) {
    console.error(
      [
        'ensure-redis: the relay tests need redis-server (Redis 7) on PATH, or its path in REDIS_SERVER_PATH.',
        'Install it as root, then run the tests again:',
        `  apt-get update && apt-get install -y ${PACKAGES.join(' ')}`,
      ].join('\n'),
    );
    process.exit(1);
  }
}
