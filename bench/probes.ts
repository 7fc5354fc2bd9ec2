// The baselines of `npm run bench`, run in the same worker as the engine and reached the same way (Comlink over a
// MessagePort): a bare keyed Dexie read (the floor of a keyed lookup) and a bare bulkPut of the same records into
// the same schema (the floor of writing). Also a few bench helpers: seeding options, the commit log of writes.
import Dexie from 'dexie';
import type { Coupon, ProductOption } from '../packages/shop-lookup/src/types';
import { parseRecords } from '@shop-lookup/shop-api';
import { confirm, metaKey, openStore, type ShopDatabase } from '../packages/shop-lookup/worker/store/store';

/** Epoch ms with sub-ms resolution, comparable between the page and its workers (same clock). */
export const epochNow = (): number => performance.timeOrigin + performance.now();

export interface Probes {
  ping(): true;
  /** The floor of a keyed lookup: one `get` by primary key. */
  getCoupon(dbName: string, code: string): Promise<Coupon | undefined>;
  /** The floor of an option-by-code lookup: one read by the `[product_no+code]` index. */
  getOptionByCode(dbName: string, productNo: number, code: string): Promise<ProductOption | undefined>;
  /** Reads every stored coupon of `dbName` into this worker's memory (untimed), for the bulkPut floor. */
  loadFloorRecords(dbName: string): Promise<number>;
  /** The floor of writing: one bulkPut of those records into a fresh database of the same schema; in-worker ms. */
  bulkPutFloor(floorDbName: string): Promise<{ ms: number; records: number }>;
  /**
   * The floor of a first sync: every page fetched and JSON-parsed as `fetchListing` does (4 ahead, as the sync
   * asks), and the records loaded by `loadFloorRecords` (already validated) bulkPut into a fresh database of the
   * same schema, each page's in the order it lists them, while the next pages come (a write takes what arrived while
   * the last one ran, 8 pages at most, as the sync's writeBehind). Nothing else: no validation, hashing, checkpoint
   * or bookkeeping. In-worker ms.
   */
  fetchAndPutFloor(
    floorDbName: string,
    baseUrl: string,
    auth: { key: string; secret: string },
  ): Promise<{ ms: number; records: number; pages: number }>;
  /**
   * The floor of a till's first sync from a relay: every snapshot chunk (`limit=10000`, as the engine asks) fetched
   * and JSON-parsed, the next one asked while this one's records (those loaded by `loadFloorRecords`, already
   * validated) are bulkPut into a fresh database of the same schema, as the engine overlaps them. Nothing else. The
   * time to each chunk's text, its parse and the writes are summed apart (they overlap: not a split of `ms`).
   */
  relayFeedFloor(
    floorDbName: string,
    baseUrl: string,
  ): Promise<{ ms: number; records: number; chunks: number; fetchMs: number; parseMs: number; putMs: number }>;
  /** Writes `products` products with 3 options each (as the engine stores them, confirmed now). */
  seedOptions(dbName: string, products: number, firstProductNo: number): Promise<number>;
  /** Epoch ms of every committed transaction that wrote to `dbName`'s coupons table since the last reset. */
  couponCommits(dbName: string): number[];
  /**
   * The floor of listing: every page of GET /v2/shop/coupons fetched and JSON-parsed, nothing else; one request at
   * a time (as the sync must, to see a throttle answer before sending the next), or `parallel` at a time.
   */
  fetchListing(
    baseUrl: string,
    auth: { key: string; secret: string },
    parallel: number,
  ): Promise<{ ms: number; pages: number; rows: number }>;
  /** Where the time of this worker's list requests went (Resource Timing): mean ms per request, then clears. */
  listRequestTimings(): { count: number; total: number; waiting: number; receiving: number; gaps: number };
  resetCommits(): void;
  close(): void;
}

const OPTION_CODES = ['SIZE', 'COLOR', 'MEMO'] as const;

/** Three options of one product in the API's loose wire shapes (value_list as array, object, null). */
function wireOptions(productNo: number): Record<string, unknown>[] {
  return [
    {
      no: 1,
      code: OPTION_CODES[0],
      type: 'default',
      name: '사이즈',
      is_require: 'Y',
      value_list: [
        { code: 'S', name: 'S' },
        { code: 'M', name: 'M' },
        { code: 'L', name: 'L' },
      ],
    },
    {
      no: 2 + (productNo % 3),
      code: OPTION_CODES[1],
      type: 'color',
      name: '색상',
      is_require: true,
      value_list: { C01: { name: '블랙' }, C02: { name: '화이트' } },
    },
    { no: 7, code: OPTION_CODES[2], type: 'input', name: '각인 문구', is_require: false, value_list: null },
  ];
}

/** Logs in (untimed) and gives a bare reader of one list page: fetched and JSON-parsed, nothing else. */
async function listPages(baseUrl: string, auth: { key: string; secret: string }) {
  const tokenAnswer = await fetch(`${baseUrl}/v2/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(auth),
  });
  const token = ((await tokenAnswer.json()) as { access_token: string }).access_token;
  return async (n: number) => {
    const res = await fetch(`${baseUrl}/v2/shop/coupons?offset=${n}&limit=100`, {
      headers: { accept: 'application/json', 'access-token': token },
    });
    return JSON.parse(await res.text()) as { data: { list: unknown[]; pagenation: { total_page: number } } };
  };
}

export function createProbes(): Probes {
  const dbs = new Map<string, ShopDatabase>();
  const db = (name: string) => {
    let d = dbs.get(name);
    if (!d) dbs.set(name, (d = openStore(name)));
    return d;
  };
  let floorRecords: Coupon[] = [];
  let commits: { db: string; at: number }[] = [];

  // Dexie fires this once a read-write transaction has committed, with the key ranges it wrote.
  Dexie.on('storagemutated', (parts: Record<string, unknown>) => {
    const at = epochNow();
    for (const part of Object.keys(parts)) {
      const m = /^idb:\/\/([^/]+)\/coupons\//.exec(part);
      if (m) commits.push({ db: m[1]!, at });
    }
  });

  return {
    ping: () => true,
    getCoupon: (dbName, code) => db(dbName).coupons.get(code),
    getOptionByCode: (dbName, productNo, code) =>
      db(dbName).options.where('[product_no+code]').equals([productNo, code]).first(),
    async loadFloorRecords(dbName) {
      floorRecords = await db(dbName).coupons.toArray();
      return floorRecords.length;
    },
    async bulkPutFloor(floorDbName) {
      await Dexie.delete(floorDbName);
      const floor = openStore(floorDbName);
      await floor.open();
      const t0 = performance.now();
      await floor.coupons.bulkPut(floorRecords);
      const ms = performance.now() - t0;
      const records = floorRecords.length;
      floorRecords = [];
      floor.close();
      await Dexie.delete(floorDbName);
      return { ms, records };
    },
    async seedOptions(dbName, products, firstProductNo) {
      const d = db(dbName);
      const at = Date.now();
      let rows = 0;
      for (let start = 0; start < products; start += 1000) {
        const options: ProductOption[] = [];
        const keys: string[] = [];
        for (let p = firstProductNo + start; p < firstProductNo + Math.min(products, start + 1000); p++) {
          options.push(...parseRecords('productOption', wireOptions(p), 'seed', p).records);
          keys.push(metaKey.options(p));
        }
        await d.transaction('rw', [d.options, d.meta], async () => {
          await d.options.bulkPut(options);
          await confirm(d, keys, at);
        });
        rows += options.length;
      }
      return rows;
    },
    couponCommits: (dbName) => commits.filter((c) => c.db === dbName).map((c) => c.at),
    async fetchListing(baseUrl, auth, parallel) {
      const page = await listPages(baseUrl, auth);
      const t0 = performance.now();
      const first = await page(1);
      const total = first.data.pagenation.total_page;
      let rows = first.data.list.length;
      let next = 2;
      const worker = async () => {
        while (next <= total) {
          const got = (await page(next++)).data.list.length;
          rows += got;
        }
      };
      await Promise.all(Array.from({ length: parallel }, worker));
      return { ms: performance.now() - t0, pages: total, rows };
    },
    async fetchAndPutFloor(floorDbName, baseUrl, auth) {
      await Dexie.delete(floorDbName);
      const floor = openStore(floorDbName);
      await floor.open();
      const page = await listPages(baseUrl, auth);
      // each page's records in the order the page lists them (as the sync writes them): written in key order, as
      // loadFloorRecords reads them, page-sized transactions cost the browser process less than in listing order
      const byCode = new Map(floorRecords.map((r) => [r.coupon_code, r]));
      const t0 = performance.now();
      const ahead = new Map<number, ReturnType<typeof page>>();
      const get = (n: number) => {
        let p = ahead.get(n);
        if (!p) ahead.set(n, (p = page(n)));
        return p;
      };
      let queue: Coupon[] = [];
      let running: Promise<void> | null = null;
      const kick = (): void => {
        if (running || queue.length === 0) return;
        const batch = queue;
        queue = [];
        running = floor.coupons.bulkPut(batch).then(() => {
          running = null;
          kick();
        });
      };
      let total = 1;
      let records = 0; // the records written (a listed code the database did not hold has none)
      for (let n = 1; n <= total; n++) {
        const answer = await get(n);
        ahead.delete(n);
        total = answer.data.pagenation.total_page;
        for (let k = n + 1; k <= Math.min(total, n + 4); k++) void get(k);
        while (queue.length >= 800 && running) await running;
        for (const row of answer.data.list) {
          const record = byCode.get(String((row as { coupon_code?: unknown }).coupon_code));
          if (!record) continue;
          queue.push(record);
          records++;
        }
        kick();
      }
      while (running) await running;
      const ms = performance.now() - t0;
      floorRecords = [];
      floor.close();
      await Dexie.delete(floorDbName);
      return { ms, records, pages: total };
    },
    async relayFeedFloor(floorDbName, baseUrl) {
      await Dexie.delete(floorDbName);
      const floor = openStore(floorDbName);
      await floor.open();
      const byCode = new Map(floorRecords.map((r) => [r.coupon_code, r]));
      let fetchMs = 0;
      let parseMs = 0;
      let putMs = 0;
      const ask = async (query: string) => {
        const t = performance.now();
        const res = await fetch(`${baseUrl}/relay/v1/feed?${query}`, {
          headers: { accept: 'application/json' },
          cache: 'no-store',
        });
        const text = await res.text();
        const p = performance.now();
        fetchMs += p - t;
        const answer = JSON.parse(text) as {
          handle: string;
          cursor: string | null;
          upserts: { resource: string; key: string }[];
        };
        parseMs += performance.now() - p;
        return answer;
      };
      const t0 = performance.now();
      let reply = ask('limit=10000');
      let writing: Promise<void> = Promise.resolve();
      let records = 0;
      let chunks = 0;
      for (;;) {
        const answer = await reply;
        chunks++;
        const batch: Coupon[] = [];
        for (const u of answer.upserts) {
          const record = u.resource === 'coupons' ? byCode.get(u.key) : undefined;
          if (record) batch.push(record);
        }
        records += batch.length;
        if (answer.cursor) reply = ask(`cursor=${answer.cursor}&handle=${answer.handle}&limit=10000`);
        await writing;
        writing = (async () => {
          const t = performance.now();
          await floor.coupons.bulkPut(batch);
          putMs += performance.now() - t;
        })();
        if (!answer.cursor) break;
      }
      await writing;
      const ms = performance.now() - t0;
      floorRecords = [];
      floor.close();
      await Dexie.delete(floorDbName);
      return { ms, records, chunks, fetchMs, parseMs, putMs };
    },
    listRequestTimings() {
      const list = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((e) =>
        e.name.includes('/v2/shop/coupons?'),
      );
      performance.clearResourceTimings();
      const mean = (f: (e: PerformanceResourceTiming) => number) =>
        list.reduce((a, e) => a + f(e), 0) / Math.max(1, list.length);
      const sorted = [...list].sort((a, b) => a.startTime - b.startTime);
      const gaps =
        sorted.slice(1).reduce((a, e, i) => a + Math.max(0, e.startTime - sorted[i]!.responseEnd), 0) /
        Math.max(1, list.length - 1);
      return {
        count: list.length,
        total: mean((e) => e.responseEnd - e.startTime),
        waiting: mean((e) => e.responseStart - e.requestStart),
        receiving: mean((e) => e.responseEnd - e.responseStart),
        gaps,
      };
    },
    resetCommits() {
      commits = [];
    },
    close() {
      for (const d of dbs.values()) d.close();
      dbs.clear();
    },
  };
}

export { OPTION_CODES };
