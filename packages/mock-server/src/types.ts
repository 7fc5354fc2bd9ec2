// Public types of the mock shop API. Types only: every other mock-server file imports from here.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * One raw wire record (coupon, issued coupon or option), kept as loose as the real API sends it.
 * @example const coupon: WireRecord = { coupon_code: 'NEW1', apply_sale_price: '15000' };
 */
export type WireRecord = Record<string, unknown>;

/**
 * Options of the default data generator.
 * @example createMockData({ seed: 7, coupons: 100_000 })
 */
export interface MockDataOptions {
  /** PRNG seed; the same seed always gives the same data. Default 1. @example { seed: 42 } */
  seed?: number;
  /** Number of coupons, including the fixed special ones at the start. Default 240. @example { coupons: 100_000 } */
  coupons?: number;
  /** Number of issued coupons, including the fixed ones at the start. Default 300. @example { issuedCoupons: 0 } */
  issuedCoupons?: number;
  /** Number of products, numbered from 13801. Default 24. @example { products: 5 } */
  products?: number;
}

/**
 * The data a mock answers from. Live and mutable: change it and the next answer changes.
 * @example api.data.coupons.push({ coupon_code: 'NEW1', name: '새 쿠폰' })
 */
export interface MockData {
  /** Raw coupon records in listing order (may hold malformed records on purpose). */
  coupons: WireRecord[];
  /** Raw issued-coupon records, each with `coupon_issue_code` and its parent's `coupon_code`. */
  issuedCoupons: WireRecord[];
  /** product_no -> raw option records in order. */
  products: Map<number, WireRecord[]>;
}

/**
 * A fault to inject into the next matching `/v2` answer(s).
 * @example api.inject('http500', { path: '/v2/shop/coupons' })
 */
export type MockFault =
  | 'http500'
  | 'code-19'
  | 'code-999'
  | 'throttle'
  | 'expire-token'
  | 'bad-credentials'
  | 'permission'
  | 'drop'
  | 'hang'
  | 'truncated-json'
  | 'html'
  | 'wrong-content-type'
  | 'malformed-record'
  | 'repeat-page'
  | 'skip-rows'
  | { delayMs: number };

/**
 * Which requests a fault applies to.
 * @example { path: '/v2/shop/coupons', after: 2, times: Infinity }
 */
export interface FaultWhen {
  /** A string matches the decoded pathname by whole-segment prefix ('/v2/shop/coupons' matches '/v2/shop/coupons/X'
   * but not '/v2/shop/couponsX'); a RegExp is tested against the decoded pathname. Default: every /v2 request. */
  path?: string | RegExp;
  /** How many requests the fault hits. Default 1; Infinity allowed. */
  times?: number;
  /** Let this many matching requests pass untouched first. Default 0. */
  after?: number;
}

/**
 * Which requests a hold catches: as for faults (`times` default 1), and when their answer is made.
 * @example api.hold({ path: '/v2/shop/coupons', after: 1, answered: true })
 */
export type HoldWhen = FaultWhen & {
  /** Make the answer from the data at arrival and hold only its sending. Default false: hold the request itself. */
  answered?: boolean;
};

/**
 * A hold on matching `/v2` requests: each is answered only after `release()`, from the data as it is then.
 * @example const h = api.hold({ path: '/v2/shop/coupons', after: 1 }); await h.arrived; api.upsertCoupon(x);
 * h.release();
 */
export interface MockHold {
  /** Names the hold for the control endpoints (`/__mock/holds/<id>`). */
  id: number;
  /** Resolves with the record of the first request the hold caught. */
  arrived: Promise<MockRequestRecord>;
  /** Whether a request was caught yet (what `arrived` tells, for polling over HTTP). */
  readonly caught: boolean;
  /** How many requests are held right now. */
  readonly held: number;
  /** Answers the held requests; later matching requests pass. */
  release(): void;
}

/**
 * One `/v2` request the mock received (OPTIONS and /__mock requests are not recorded).
 * @example expect(api.requests.at(-1)).toMatchObject({ status: 429, code: -7, throttled: true })
 */
export interface MockRequestRecord {
  /** Date.now() when the request arrived. */
  at: number;
  method: string;
  /** Pathname with each segment decoded (segments joined by '/'); the raw pathname when decoding failed. */
  path: string;
  /** Pathname exactly as received, without the query string. */
  rawPath: string;
  query: Record<string, string>;
  /** HTTP status sent; 0 while pending or when the socket was dropped / the request hung. */
  status: number;
  /** The envelope `code` sent, or null when no envelope was sent. */
  code: number | null;
  /** Name of the injected fault ('drop', 'delay', …), or 'down' when dropped by setDown(true). */
  fault?: string;
  /** True when the answer was a throttle (real rate limit or the 'throttle' fault). */
  throttled: boolean;
}

/**
 * Options of the mock shop API.
 * @example await startMockShopApi({ rateLimits: false, data: { coupons: 1000 } })
 */
export interface MockShopApiOptions {
  /** Port to listen on; default 0 (an ephemeral port). @example { port: 8787 } */
  port?: number;
  /** Host to listen on; default '127.0.0.1'. @example { host: '0.0.0.0' } */
  host?: string;
  /** Accepted key; default 'demo-key'. @example { key: 'my-key' } */
  key?: string;
  /** Accepted secret; default 'demo-secret'. @example { secret: 'my-secret' } */
  secret?: string;
  /** Default true: calls without a valid `access-token` header get -2 (HTTP 401). @example { requireAuth: false } */
  requireAuth?: boolean;
  /** Token lifetime in ms; default 3_600_000. @example { tokenTtlMs: 50 } */
  tokenTtlMs?: number;
  /** Requests per second per key; default { list: 1, other: 5 }; false = off. @example { rateLimits: false } */
  rateLimits?: false | { list?: number; other?: number };
  /** A ready data set, or options for createMockData. @example { data: { seed: 3, coupons: 50 } } */
  data?: MockData | MockDataOptions;
  /**
   * Default 'mapped' (each error code gets its HTTP status); 'always200' sends errors with HTTP 200.
   * @example { httpStatus: 'always200' }
   */
  httpStatus?: 'mapped' | 'always200';
  /** Default 'paged'; 'bare' answers lists with `data` as a bare array of all rows. @example { listShape: 'bare' } */
  listShape?: 'paged' | 'bare';
  /** Type of `pagenation.data_count`; default 'string' (as the real API sends). @example { dataCountAs: 'number' } */
  dataCountAs?: 'string' | 'number';
  /** Artificial delay before each /v2 answer, in ms; default 0. @example { latencyMs: 30 } */
  latencyMs?: number;
  /** Default true: serve the /__mock/* control endpoints. @example { control: false } */
  control?: boolean;
  /** Default true: send CORS headers and answer preflights. @example { cors: false } */
  cors?: boolean;
  /**
   * Default false: serialise each list page once and send the same text again while the page's rows are the same
   * objects (upsertCoupon and removeCoupon are seen; a row changed in place is not). For benchmarks, where the
   * mock shares the client's cores and the real API would not. @example { cacheListPages: true }
   */
  cacheListPages?: boolean;
}

/**
 * Options of createMockShopApiHandler: those of startMockShopApi without the listening address.
 * @example createMockShopApiHandler({ requireAuth: false } satisfies MockShopApiHandlerOptions)
 */
export type MockShopApiHandlerOptions = Omit<MockShopApiOptions, 'port' | 'host'>;

/**
 * A node:http / connect handler; with `next`, it passes on every path outside /v2/ and /__mock/.
 * @example createServer((req, res) => mock.handler(req, res));
 */
export type MockRequestHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/**
 * The mock's request handler and the methods that steer it.
 * @example const mock = createMockShopApiHandler(); server.middlewares.use(mock.handler);
 */
export interface MockShopApiHandler {
  /** Live and mutable: changing it changes what the server answers. */
  data: MockData;
  /** Replace the coupon with the same coupon_code, or append. */
  upsertCoupon(record: WireRecord): void;
  /** Remove a coupon by code; false when there was none. */
  removeCoupon(code: string): boolean;
  /** Replace the issued coupon with the same coupon_issue_code, or append. */
  upsertIssuedCoupon(record: WireRecord): void;
  /** Set (or create) a product's option list. */
  setProductOptions(productNo: number, options: WireRecord[]): void;
  /** Every token issued so far now answers -2. */
  expireTokens(): void;
  /** While down, every /v2 request's socket is destroyed without an answer; /__mock still works. */
  setDown(down: boolean): void;
  /** Add a fault for the next matching /v2 request(s). */
  inject(fault: MockFault, when?: FaultWhen): void;
  /** Remove every pending fault. */
  clearFaults(): void;
  /** Hold the next matching /v2 request(s) (`when` as for faults, `times` default 1) until `release()`. */
  hold(when?: HoldWhen): MockHold;
  /** Every /v2 request received, oldest first (the same array for the mock's whole life). */
  requests: MockRequestRecord[];
  /** Empty `requests` (in place). */
  resetRequests(): void;
  handler: MockRequestHandler;
}

/**
 * A running mock shop API.
 * @example const api = await startMockShopApi(); await fetch(`${api.url}/v2/auth?key=demo-key&secret=demo-secret`);
 */
export interface MockShopApi extends MockShopApiHandler {
  /** 'http://127.0.0.1:<port>' (no trailing slash). */
  url: string;
  port: number;
  /** Stop listening and destroy open (keep-alive) connections: clients then get connection refused. */
  close(): Promise<void>;
}
