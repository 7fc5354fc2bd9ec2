// ShopLookup, the public object's interface: types only, so that the contract with the engine (protocol.ts) can
// name its calls without importing the host code that implements them (createShopLookup.ts).
import type { Observable } from 'rxjs';
import type {
  ClearOptions,
  Coupon,
  CouponOrder,
  CouponRelease,
  CouponVerdict,
  JournalEntry,
  JournalPage,
  IssuedCoupon,
  LookupResult,
  ProductOption,
  ReleaseOrder,
  SyncReport,
  SyncStatus,
} from './types';
import type { InspectOptions, JournalExport, LookupInspection, RefreshReport, RefreshTarget } from './toolTypes';

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
  /**
   * One issued coupon by its issued-coupon code (read through, then kept offline).
   * @example lookup.issuedCoupon('IC-7F3K-2Q9M')
   */
  issuedCoupon(issuedCouponCode: string): Observable<LookupResult<IssuedCoupon | null>>;
  /** A product's options in option-number order. @example lookup.productOptions(13805) */
  productOptions(productNo: number): Observable<LookupResult<ProductOption[]>>;
  /** One option by its number (never matched by code). @example lookup.productOptionByNo(13805, 12) */
  productOptionByNo(productNo: number, optionNo: number): Observable<LookupResult<ProductOption | null>>;
  /**
   * One option by its code (never matched by number, even if the code looks like one).
   * @example lookup.productOptionByCode(13805, '12')
   */
  productOptionByCode(productNo: number, optionCode: string): Observable<LookupResult<ProductOption | null>>;
  /**
   * Refreshes everything now; resolves with a report when done or failed (never rejects for API trouble). Its data
   * is the API's as of the call: a sync already reading when it is called (the engine's own, an earlier `sync()`)
   * is waited for, then one more runs, shared by every `sync()` made meanwhile.
   * @example const r = await lookup.sync();
   */
  sync(): Promise<SyncReport>;
  /**
   * Keeps these products' options synced too, shop-wide: every tab's syncs list them (and they are synced now when
   * online).
   * @example await lookup.trackProducts([13801]);
   */
  trackProducts(productNos: number[]): Promise<void>;
  /**
   * Fetches issued coupons ahead, so they can be checked offline.
   * @example await lookup.prefetchIssuedCoupons(['IC-7F3K-2Q9M']);
   */
  prefetchIssuedCoupons(codes: string[]): Promise<SyncReport>;
  /**
   * Decides whether a coupon or issued-coupon code applies to an order and how much it takes off: from a fresh API
   * answer when online, from local data when offline (and then says how old that data is). Never rejects for API
   * trouble: the verdict says what is known. Surrounding spaces and invisible characters of `code` are dropped, and it is read in Unicode's composed form (NFC), online and offline alike.
   * Online on a relay that takes this till's uses, an issued coupon's "yes" is the relay's to give: its claim (the
   * verdict's `claim`) records it only as the voucher's first use, within `claimTimeoutMs`.
   * @example const v = await lookup.validateCoupon(code, { amount: 32000 }); if (v.ok) total -= v.discount;
   */
  validateCoupon(code: string, order: CouponOrder): Promise<CouponVerdict>;
  /**
   * Gives back an issued coupon this till accepted for an order whose sale was voided: this till's use of it for that
   * order is dropped (journaled as a release), and the shop's relay drops it for every till (offline: once the till
   * is back). The next check of the code passes, on this till and the others. Only the till that made the sale can
   * give it back (the relay refuses it to any other: `release_refused`).
   * @example await lookup.releaseCoupon('IC-7F3K-2Q9M', { orderId: 'A-1017' }); // { released: 1, ... }
   */
  releaseCoupon(code: string, order: ReleaseOrder): Promise<CouponRelease>;
  /**
   * Verdicts given from local data while offline, oldest first, for reconciling later: one page (default the
   * oldest 1,000); the next page starts after the last id of this one.
   * @example const page = await lookup.offlineJournal({ after: 0, limit: 500 }); report(page);
   * await lookup.clearOfflineJournal(page.at(-1)!.id);
   */
  offlineJournal(page?: JournalPage): Promise<JournalEntry[]>;
  /**
   * Deletes journal entries up to and including `throughId` (required: the last id you reconciled); returns how many.
   * @example await lookup.clearOfflineJournal(lastReportedId);
   */
  clearOfflineJournal(throughId: number): Promise<number>;
  /**
   * Asks the API (or the relay) again for one coupon, issued coupon, product's options or option now, as a query's
   * `refetch` does, without a whole `sync()`: every open lookup of it updates. Offline it asks nothing and resolves
   * saying so (`offline: true`); it never rejects for API trouble. The coupon list is refreshed by `sync()`.
   * @example const r = await lookup.refresh({ coupon: 'WELCOME10' }); if (!r.ok) note(r.error?.message);
   */
  refresh(target: RefreshTarget): Promise<RefreshReport>;
  /**
   * The offline journal as a file a shop can open: one row per verdict, with the columns a shop reconciles by (time
   * in the shop's time zone, till, order, code, amount, discount, reason, source, overrides, shared, conflict); CSV
   * cells that a spreadsheet would run as a formula are escaped. Nothing is deleted (`clearOfflineJournal`).
   * @example const csv = await lookup.exportJournal({ format: 'csv', since: startOfDay });
   */
  exportJournal(options: JournalExport): Promise<string>;
  /**
   * What the engine holds and does now (records, tracked products, each resource's last sync and error, uses not
   * sent yet, the newest journal entries): what the devtools show. Reads no network. `{ records: false }` leaves out
   * the record counts (`records` null), which read every row of a large table.
   * @example console.table((await lookup.inspect()).resources);
   */
  inspect(options?: InspectOptions): Promise<LookupInspection>;
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
