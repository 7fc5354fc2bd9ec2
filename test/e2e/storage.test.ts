// Storage under pressure, on each engine with its own storage limit set low (10 MB for the site: Chromium's origin
// quota over CDP, Firefox's quota manager limit, WebKit's origin quota in a profile on disk): the site's storage
// filled to the brim, a sync that must write fails safely with `quota_exceeded`, lookups keep answering what is
// stored and nothing is lost; with room again the next sync saves it all. And a database deleted under the page
// (as a browser evicts one) is built again by the next sync.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import {
  click,
  e2eSuite,
  openTill,
  readIndexedDb,
  statusOf,
  tid,
  waitFor,
  waitForPage,
  type EnginePage,
} from './harness';

const LIMIT_BYTES = 10 * 1024 * 1024;
const FILLER_DB = 'e2e-filler';

/** Every stored coupon's name, by code, read from IndexedDB directly. */
function storedNames(page: EnginePage): Promise<Record<string, string>> {
  return page.evaluate(
    () =>
      new Promise<Record<string, string>>((resolve, reject) => {
        const open = indexedDB.open('shop-lookup');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const all = db.transaction('coupons').objectStore('coupons').getAll();
          all.onsuccess = () => {
            db.close();
            resolve(
              Object.fromEntries(
                (all.result as { coupon_code: string; name: string }[]).map((c) => [c.coupon_code, c.name]),
              ),
            );
          };
          all.onerror = () => reject(all.error);
        };
      }),
  );
}

/**
 * Fills the site's storage with incompressible data in a database of its own until the engine's quota refuses
 * even a small write; resolves with the bytes written and the name of the error that stopped it.
 */
function fillStorage(page: EnginePage): Promise<{ bytes: number; error: string }> {
  return page.evaluate(async (name) => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open(name, 1);
      req.onupgradeneeded = () => req.result.createObjectStore('filler', { autoIncrement: true });
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const put = (size: number) =>
      new Promise<void>((resolve, reject) => {
        const data = new Uint8Array(size);
        for (let i = 0; i < size; i += 65_536) crypto.getRandomValues(data.subarray(i, Math.min(size, i + 65_536)));
        const tx = db.transaction('filler', 'readwrite');
        tx.objectStore('filler').add(data);
        tx.oncomplete = () => resolve();
        tx.onabort = () => reject(tx.error ?? new Error('aborted'));
      });
    let bytes = 0;
    let error = '';
    // big chunks first, then ever smaller ones, until even 4 kB no longer fit
    for (const size of [1 << 20, 1 << 18, 1 << 16, 1 << 14, 1 << 12]) {
      for (;;) {
        try {
          await put(size);
          bytes += size;
        } catch (e) {
          error = (e as Error).name;
          break;
        }
      }
    }
    db.close();
    return { bytes, error };
  }, FILLER_DB);
}

function deleteDatabase(page: EnginePage, name: string): Promise<string> {
  return page.evaluate(
    (name) =>
      new Promise<string>((resolve) => {
        const req = indexedDB.deleteDatabase(name);
        req.onsuccess = () => resolve('deleted');
        req.onerror = () => resolve(`failed: ${String(req.error)}`);
      }),
    name,
  );
}

e2eSuite('storage under pressure', { timeout: 180_000, demo: { storageLimitBytes: LIMIT_BYTES } }, (t) => {
  it('a full storage fails the sync safely with quota_exceeded; lookups keep answering, nothing is lost; with room again, the next sync saves it', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    const originals = structuredClone(demo.mock.data.coupons);
    try {
      const page = await openTill(context, demo);
      const before = await storedNames(page);
      expect(Object.keys(before)).toHaveLength(originals.length);

      const filled = await fillStorage(page);
      console.info(`[${t.engine}] filled ${(filled.bytes / 1e6).toFixed(2)} MB until ${filled.error}`);
      expect(filled.error).toBe('QuotaExceededError');
      expect(filled.bytes).toBeLessThan(LIMIT_BYTES); // the low limit is what stopped it, not the machine

      // every coupon changes upstream: a longer name, about 1.6 kB of random text each (Firefox compresses what it
      // stores: repeated text would still fit), far more than the storage has left
      const extra = new Map(originals.map((c) => [String(c.coupon_code), randomBytes(1200).toString('base64')]));
      const renamed = (c: Record<string, unknown>) => `${String(c.name)} ${extra.get(String(c.coupon_code))}`;
      for (const c of originals) demo.mock.upsertCoupon({ ...c, name: renamed(c) });
      await click(page, tid('sync-now'));
      await waitForPage(
        page,
        'the sync to fail on the full storage',
        () => document.querySelector('[data-testid="last-error"]')?.hasAttribute('hidden') === false,
        undefined,
      );
      const failed = await statusOf(page);
      expect(failed.lastError?.code, JSON.stringify(failed.lastError)).toBe('quota_exceeded');
      await demo.screenshot(page, 'storage-full');

      // nothing lost, nothing half-written: every coupon as it was, and the lookups answer it
      expect(await storedNames(page)).toEqual(before);
      expect(
        await page.evaluate(() => document.querySelector('[data-testid="coupon-count"]')?.getAttribute('data-count')),
      ).toBe(String(originals.length));

      // room again: the next sync saves every change
      expect(await deleteDatabase(page, FILLER_DB)).toBe('deleted');
      await click(page, tid('sync-now'));
      await waitFor(page, '[data-testid="last-error"][hidden]', 'the error cleared by a good sync');
      expect(await storedNames(page)).toEqual(
        Object.fromEntries(originals.map((c) => [String(c.coupon_code), renamed(c)])),
      );
      expect((await statusOf(page)).lastError).toBeNull();
    } finally {
      for (const c of originals) demo.mock.upsertCoupon(c);
      await context.close();
    }
  });

  it('a database deleted under the page (evicted) is built again by the next sync', async () => {
    const { demo } = t;
    const context = await demo.newContext();
    try {
      const page = await openTill(context, demo);
      const count = demo.mock.data.coupons.length;
      expect((await readIndexedDb(page, 'shop-lookup', 'coupons')).count).toBe(count);

      // what eviction does: the database goes while the engine has it open
      expect(await deleteDatabase(page, 'shop-lookup')).toBe('deleted');
      // the engine says what happened (not "another tab upgraded it"), and the next sync builds it again
      await waitForPage(
        page,
        'the engine to notice',
        () => !document.querySelector('[data-testid="last-error"]')?.hasAttribute('hidden'),
        undefined,
      );
      expect((await statusOf(page)).lastError?.code).toBe('storage_evicted');
      await click(page, tid('sync-now'));
      await waitForPage(
        page,
        'the database built again',
        async (n) => {
          const db = await new Promise<IDBDatabase | null>((resolve) => {
            const req = indexedDB.open('shop-lookup');
            req.onupgradeneeded = () => req.transaction!.abort();
            req.onsuccess = () => resolve(req.result);
            req.onerror = () => resolve(null);
          });
          if (!db) return false;
          try {
            if (!db.objectStoreNames.contains('coupons')) return false;
            const counted = await new Promise<number>((resolve) => {
              const c = db.transaction('coupons').objectStore('coupons').count();
              c.onsuccess = () => resolve(c.result);
              c.onerror = () => resolve(-1);
            });
            return counted === n;
          } finally {
            db.close();
          }
        },
        count,
      );
      await waitFor(page, `[data-testid="coupon-count"][data-count="${count}"]`, 'the page shows every coupon again');
      await waitFor(page, '[data-testid="last-error"][hidden]', 'the error cleared by the sync that built it again');
      expect((await statusOf(page)).lastError).toBeNull();
    } finally {
      await context.close();
    }
  });
});
