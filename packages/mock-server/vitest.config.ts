// @shop-lookup/mock-server's tests (test/), one file at a time: `npm test` here, or `npm test -w
// @shop-lookup/mock-server` from the root, whose lanes run them too (vitest.config.ts there).
import { defineConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.ts';

export default defineConfig(packageTests('mock-server'));
