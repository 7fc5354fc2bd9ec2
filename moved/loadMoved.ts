// Loads the package a shop-lookup entry moved to (shop-lookup/relay → @shop-lookup/relay, ...): the entry keeps
// working for one release when that package is installed beside shop-lookup, with a one-time deprecation warning;
// without it, loading the entry fails with an error that names the package to install.
import { ShopLookupError } from '@shop-lookup/shop-api';

/** Whether `error` says that `name` itself is not installed (not one of its own files or dependencies). */
function isMissing(error: unknown, name: string): boolean {
  const e = error as { code?: unknown; message?: unknown };
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'MODULE_NOT_FOUND') return false;
  const message = String(e.message ?? '');
  return message.includes(`'${name}'`) || message.includes(`"${name}"`);
}

/**
 * `load()` (a literal `import()` of `to`, so bundlers keep it external), or `moved_package` naming the package.
 * @example const relay = await loadMoved('shop-lookup/relay', '@shop-lookup/relay', () =>
 * import('@shop-lookup/relay'));
 */
export async function loadMoved<T>(entry: string, to: string, load: () => Promise<T>): Promise<T> {
  const pkg = to.split('/').slice(0, 2).join('/'); // '@shop-lookup/mock-server/msw' is in @shop-lookup/mock-server
  let loaded: T;
  try {
    loaded = await load();
  } catch (error) {
    if (!isMissing(error, pkg)) throw error;
    throw new ShopLookupError(
      'moved_package',
      `${entry} moved to the package ${pkg}, which is not installed: npm install ${pkg}, then import from '${to}'.`,
      { cause: error },
    );
  }
  process.emitWarning(`${entry} is deprecated and goes away in the next release: import from '${to}' instead.`, {
    type: 'DeprecationWarning',
    code: 'SHOP_LOOKUP_MOVED',
  });
  return loaded;
}
