// createShopLookup: the host side of shop-lookup, the six lookups as Observables plus sync, status and checkout.
import { connectEngine, type Connection } from './connectEngine';
import { ShopLookupError } from './errors';
import type { ShopLookup } from './shopLookup';
import type { ShopLookupOptions } from './types';
import { createWatchHub } from './watchHub';
import type { WatchQuery } from './protocol';

export type { ShopLookup } from './shopLookup';

/** Offline data must survive storage pressure: ask once (a window only; workers cannot) and tell the engine. */
async function askPersistence(connection: Promise<Connection>): Promise<void> {
  const storage = (globalThis as { document?: unknown; navigator?: { storage?: StorageManager } }).document
    ? globalThis.navigator?.storage
    : undefined;
  if (!storage?.persist) return;
  try {
    const persisted = (await storage.persisted()) || (await storage.persist());
    await (await connection).api.setPersisted(persisted);
  } catch {
    // no answer is an answer too: status().persisted stays undefined
  }
}

/**
 * The page's online/offline events, passed on to the engine: Chromium does not fire them in workers, and a
 * worker that never hears "online" would stay offline after a reload with no network.
 */
function forwardNetworkEvents(connection: Promise<Connection>): () => void {
  const page = globalThis as {
    document?: unknown;
    addEventListener?: Window['addEventListener'];
    removeEventListener?: Window['removeEventListener'];
  };
  if (!page.document || !page.addEventListener || !page.removeEventListener) return () => undefined;
  const tell = (online: boolean) => () =>
    void connection.then((c) => c.api.setNetworkOnline(online)).catch(() => undefined);
  const online = tell(true);
  const offline = tell(false);
  page.addEventListener('online', online);
  page.addEventListener('offline', offline);
  return () => {
    page.removeEventListener!('online', online);
    page.removeEventListener!('offline', offline);
  };
}

/**
 * Creates the lookups for one shop. Only `baseUrl` is required.
 * @example
 * const lookup = createShopLookup({ baseUrl: '/shop-api', products: [13805] });
 * lookup.coupon('WELCOME10').subscribe(({ data, syncedAt, offline }) => show(data, syncedAt, offline));
 */
export function createShopLookup(options: ShopLookupOptions): ShopLookup {
  // (one check: a path without its leading slash would be resolved against the worker script's URL, not the page's
  // origin)
  const baseUrl: unknown = options?.baseUrl;
  if (typeof baseUrl !== 'string' || !/^(https?:\/\/|\/)/i.test(baseUrl)) {
    throw new ShopLookupError(
      'bad_options',
      `createShopLookup: baseUrl must be an http(s) URL or a path that starts with '/' (such as '/shop-api'), got ${JSON.stringify(baseUrl)}.`,
    );
  }
  if (options.coupons !== undefined && options.coupons !== 'all' && options.coupons !== 'byCode') {
    throw new ShopLookupError(
      'bad_options',
      "createShopLookup: option \"coupons\" must be 'all' (a till) or 'byCode' (a storefront).",
    );
  }
  if (options.token !== undefined && typeof options.token !== 'string' && typeof options.token !== 'function') {
    throw new ShopLookupError(
      'bad_options',
      'createShopLookup: option "token" must be the till\'s token (a string) or a function that gives it.',
    );
  }
  const hub = createWatchHub();
  const connection: Promise<Connection> = connectEngine(options, hub.listener);
  connection.catch(() => undefined); // surfaced by each call and subscription
  if (options.persist !== false) void askPersistence(connection);
  const stopForwarding = forwardNetworkEvents(connection);
  let closing: Promise<void> | null = null;

  const call = async <T>(fn: (c: Connection) => Promise<T>): Promise<T> => {
    if (closing) throw new ShopLookupError('closed', 'shop-lookup was closed.');
    return fn(await connection);
  };

  // The engine's calls that take arguments, passed on as they are (sync() takes none: an event handler's event never
  // reaches the engine), and the lookups, each a query named by its arguments: loops over names keep the main entry
  // small (docs/performance.md, the bundle rows).
  const lookup = {} as Record<string, (a: unknown, b: unknown) => unknown>;
  for (const name of [
    'trackProducts',
    'prefetchIssuedCoupons',
    'validateCoupon',
    'releaseCoupon',
    'offlineJournal',
    'clearOfflineJournal',
    'refresh',
    'exportJournal',
    'inspect',
    'clear',
  ] as const)
    lookup[name] = (a, b) => call((c) => (c.api[name] as (a: unknown, b: unknown) => Promise<unknown>)(a, b));
  for (const [kind, x, y] of [
    ['coupons'],
    ['coupon', 'code'],
    ['issuedCoupon', 'code'],
    ['productOptions', 'productNo'],
    ['productOptionByNo', 'productNo', 'optionNo'],
    ['productOptionByCode', 'productNo', 'optionCode'],
    ['status'],
  ])
    lookup[kind!] = (a, b) =>
      hub.observe(connection, { kind, ...(x && { [x]: a }), ...(y && { [y]: b }) } as WatchQuery);

  return {
    ...(lookup as unknown as Omit<ShopLookup, 'sync' | 'close'>),
    sync: () => call((c) => c.api.sync()),
    close() {
      closing ??= (async () => {
        stopForwarding();
        hub.completeAll();
        const c = await connection.catch(() => null);
        if (!c) return;
        await c.api.close();
        c.dispose();
      })();
      return closing;
    },
  };
}
