// The README's Node script, run as a user would: against the built package, in a Node process of its own.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('examples/node-offline.mjs', () => {
  it('gets all six lookups online, then again offline after the mock API stops', async () => {
    await run('npm', ['run', 'build'], { timeout: 120_000 });
    const { stdout } = await run('node', ['examples/node-offline.mjs'], { timeout: 60_000 });
    const [online, offline] = stdout.split('-- offline');
    for (const name of [
      'coupons',
      'coupon',
      'issuedCoupon',
      'productOptions',
      'productOptionByNo',
      'productOptionByCode',
    ]) {
      expect(online).toMatch(new RegExp(`^${name}: .+ \\| offline: false \\| syncedAt: 20`, 'm'));
      expect(offline).toMatch(new RegExp(`^${name}: .+ \\| offline: true \\| syncedAt: 20`, 'm'));
    }
    expect(online).toContain('coupons: 240 records');
    expect(offline).toContain('coupons: 240 records');
    expect(stdout).toMatch(/sync without the API: ok=false, network_error: Could not reach the shop API/);
  }, 180_000);
});
