// createShopLookup: the host side of shop-lookup, the six lookups as Observables plus sync, status and checkout.
import type { Observable } from 'rxjs';
import { connectEngine, type Connection } from './connectEngine';
import { ShopLookupError } from './errors';
import type {
  ClearOptions,
  Coupon,
  CouponOrder,
  CouponVerdict,
  JournalEntry,
  JournalPage,
  IssuedCoupon,
  LookupResult,
  ProductOption,
  ShopLookupOptions,
  SyncReport,
  SyncStatus,
} from './types';
import { createWatchHub } from './watchHub';

/**
 * The six lookups as Observables that answer at once from local data, update live, refresh from the API when
 * online and keep answering offline; plus sync control and status.
 * @example
 * const lookup: ShopLookup = createShopLookup({ baseUrl: '/shop-api' });
 * const sub = lookup.productOptions(13805).subscribe(({ data, offline }) => render(data, offline));
 * sub.unsubscribe(); await lookup.close();
 */
export interface ShopLookup {
  /** All coupons (synced in full). @example lookup.coupons().subscribe(({ data }) => renderList(data)); */
  coupons(): Observable<LookupResult<Coupon[]>>;
  /** One coupon by its code; `data: null` when unknown. @example lookup.coupon('WELCOME10') */
  coupon(couponCode: string): Observable<LookupResult<Coupon | null>>;
  /** One issued coupon by its issued-coupon code (read through, then kept offline). @example lookup.issuedCoupon('IC-7F3K-2Q9M') */
  issuedCoupon(issuedCouponCode: string): Observable<LookupResult<IssuedCoupon | null>>;
  /** A product's options in option-number order. @example lookup.productOptions(13805) */
  productOptions(productNo: number): Observable<LookupResult<ProductOption[]>>;
  /** One option by its number (never matched by code). @example lookup.productOptionByNo(13805, 12) */
  productOptionByNo(productNo: number, optionNo: number): Observable<LookupResult<ProductOption | null>>;
  /** One option by its code (never matched by number, even if the code looks like one). @example lookup.productOptionByCode(13805, '12') */
  productOptionByCode(productNo: number, optionCode: string): Observable<LookupResult<ProductOption | null>>;
  /** Refreshes everything now; resolves with a report when done or failed (never rejects for API trouble). @example const r = await lookup.sync(); */
  sync(): Promise<SyncReport>;
  /** Keeps these products' options synced too, shop-wide: every tab's syncs list them (and they are synced now when online). @example await lookup.trackProducts([13801]); */
  trackProducts(productNos: number[]): Promise<void>;
  /** Fetches issued coupons ahead, so they can be checked offline. @example await lookup.prefetchIssuedCoupons(['IC-7F3K-2Q9M']); */
  prefetchIssuedCoupons(codes: string[]): Promise<SyncReport>;
  /**
   * Decides whether a coupon or issued-coupon code applies to an order and how much it takes off: from a fresh API
   * answer when online, from local data when offline (and then says how old that data is). Never rejects for API
   * trouble: the verdict says what is known. Surrounding spaces of `code` are dropped (online and offline alike).
   * @example const v = await lookup.validateCoupon(code, { amount: 32000 }); if (v.ok) total -= v.discount;
   */
  validateCoupon(code: string, order: CouponOrder): Promise<CouponVerdict>;
  /**
   * Verdicts given from local data while offline, oldest first, for reconciling later: one page (default the
   * oldest 1,000); the next page starts after the last id of this one.
   * @example const page = await lookup.offlineJournal({ after: 0, limit: 500 }); report(page); await lookup.clearOfflineJournal(page.at(-1)!.id);
   */
  offlineJournal(page?: JournalPage): Promise<JournalEntry[]>;
  /** Deletes journal entries up to and including `throughId` (required: the last id you reconciled); returns how many. @example await lookup.clearOfflineJournal(lastReportedId); */
  clearOfflineJournal(throughId: number): Promise<number>;
  /** Phase, progress, last sync times, last error. @example lookup.status().subscribe((s) => showBadge(s.phase)); */
  status(): Observable<SyncStatus>;
  /**
   * Deletes the local data of this dbName (tracked products included) and claims the database for this shop; waits
   * for a sync running in another tab to end first, and tells the other tabs. The offline journal is kept unless
   * `discardJournal` (export it first: offlineJournal()). @example await lookup.clear();
   */
  clear(options?: ClearOptions): Promise<void>;
  /** Stops timers, releases the worker; open lookups complete. @example await lookup.close(); */
  close(): Promise<void>;
}

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
  const page = globalThis as { document?: unknown; addEventListener?: Window['addEventListener']; removeEventListener?: Window['removeEventListener'] };
  if (!page.document || !page.addEventListener || !page.removeEventListener) return () => undefined;
  const tell = (online: boolean) => () => void connection.then((c) => c.api.setNetworkOnline(online)).catch(() => undefined);
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
  if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '') {
    throw new ShopLookupError('bad_options', "createShopLookup needs a baseUrl: the API origin or a same-origin proxy path such as '/shop-api'.");
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

  return {
    coupons: () => hub.observe(connection, { kind: 'coupons' }),
    coupon: (code) => hub.observe(connection, { kind: 'coupon', code }),
    issuedCoupon: (code) => hub.observe(connection, { kind: 'issuedCoupon', code }),
    productOptions: (productNo) => hub.observe(connection, { kind: 'productOptions', productNo }),
    productOptionByNo: (productNo, optionNo) => hub.observe(connection, { kind: 'productOptionByNo', productNo, optionNo }),
    productOptionByCode: (productNo, optionCode) =>
      hub.observe(connection, { kind: 'productOptionByCode', productNo, optionCode }),
    status: () => hub.observe(connection, { kind: 'status' }),
    sync: () => call((c) => c.api.sync()),
    trackProducts: (productNos) => call((c) => c.api.trackProducts(productNos)),
    prefetchIssuedCoupons: (codes) => call((c) => c.api.prefetchIssuedCoupons(codes)),
    validateCoupon: (code, order) => call((c) => c.api.validateCoupon(code, order)),
    offlineJournal: (page) => call((c) => c.api.offlineJournal(page)),
    clearOfflineJournal: (throughId) => call((c) => c.api.clearOfflineJournal(throughId)),
    clear: (o) => call((c) => c.api.clear(o)),
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
