// shop-lookup/relay, /proxy, /mock-server and /mock-server/msw (moved/): for one release they load the packages the
// code moved to, with one deprecation warning each; without that package, an error that names it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as relayPackage from '../packages/relay/src';
import * as mockPackage from '../packages/mock-server/src';
import * as mswPackage from '../packages/mock-server/src/msw';
import { loadMoved } from '../moved/loadMoved';

afterEach(() => vi.restoreAllMocks());

const notFound = (name: string) =>
  Object.assign(
    new Error(`Cannot find package '${name}' imported from /app/node_modules/shop-lookup/dist/node/relay.js`),
    { code: 'ERR_MODULE_NOT_FOUND' },
  );

describe('moved entries', () => {
  it('re-export what each entry exported, from the package it moved to', async () => {
    const relay = await import('../moved/relay');
    expect(relay.createShopRelay).toBe(relayPackage.createShopRelay);
    expect(relay.createRelayHub).toBe(relayPackage.createRelayHub);
    expect(relay.createMemoryStore).toBe(relayPackage.createMemoryStore);
    expect((await import('../moved/proxy')).createShopApiProxy).toBe(relayPackage.createShopApiProxy);
    const mock = await import('../moved/mockServer');
    expect(Object.keys(mock).sort()).toEqual(Object.keys(mockPackage).sort());
    for (const name of Object.keys(mockPackage))
      expect(mock[name as keyof typeof mock], name).toBe(mockPackage[name as keyof typeof mockPackage]);
    expect((await import('../moved/mockServerMsw')).createMockShopApiMsw).toBe(mswPackage.createMockShopApiMsw);
  });

  it('warns once per load that the entry is deprecated, naming where to import from', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const loaded = await loadMoved('shop-lookup/relay', '@shop-lookup/relay', async () => relayPackage);
    expect(loaded).toBe(relayPackage);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("import from '@shop-lookup/relay' instead"), {
      type: 'DeprecationWarning',
      code: 'SHOP_LOOKUP_MOVED',
    });
  });

  it('without the package, fails with moved_package naming what to install', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const failed = loadMoved('shop-lookup/proxy', '@shop-lookup/relay', () =>
      Promise.reject(notFound('@shop-lookup/relay')),
    );
    await expect(failed).rejects.toMatchObject({
      code: 'moved_package',
      message:
        "shop-lookup/proxy moved to the package @shop-lookup/relay, which is not installed: npm install @shop-lookup/relay, then import from '@shop-lookup/relay'.",
    });
    expect(warn).not.toHaveBeenCalled();
    const msw = loadMoved('shop-lookup/mock-server/msw', '@shop-lookup/mock-server/msw', () =>
      Promise.reject(notFound('@shop-lookup/mock-server')),
    );
    await expect(msw).rejects.toThrow(
      "moved to the package @shop-lookup/mock-server, which is not installed: npm install @shop-lookup/mock-server, then import from '@shop-lookup/mock-server/msw'.",
    );
  });

  it('passes on any other failure as it is (a dependency of the package missing, a bug)', async () => {
    const broken = notFound('redis');
    await expect(loadMoved('shop-lookup/relay', '@shop-lookup/relay', () => Promise.reject(broken))).rejects.toBe(
      broken,
    );
  });
});
