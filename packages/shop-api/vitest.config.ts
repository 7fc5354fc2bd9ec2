// @shop-lookup/shop-api's tests (test/), one file at a time: `npm test` here, or `npm test -w @shop-lookup/shop-api`
// from the root, whose lanes run them too (vitest.config.ts there).
import { defineConfig } from 'vitest/config';
import { packageTests } from '../../vitest.shared.ts';

export default defineConfig(packageTests('shop-api'));
