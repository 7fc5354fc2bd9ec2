// Fault injection: syncs driven through every fault the mock API can produce, alone and mixed, with the
// invariants checked after each one and also during it, after each page (every list request is held until the
// check is done): lookups answer, the local data is the last complete snapshot or the new one (never a mix, never
// emptied by a failure), no record is lost, and status() tells the truth. A first sync into an empty database is
// faulted too (during it, only records the API has may show), and so are the single-item paths: read-through,
// validateCoupon online, prefetchIssuedCoupons.
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockFault, MockShopApi } from '@shop-lookup/mock-server';
import type { ShopLookup } from '../src';
import type { Coupon, SyncReport } from '../src/types';
import { parseRecords } from '@shop-lookup/shop-api';
import { sameRecord } from '@shop-lookup/shop-api';
import { lookupFor, next, startMock } from './utils';

const LIST = '/v2/shop/coupons';
const ALL_FAULTS: MockFault[] = [
  'http500',
  'code-19',
  'code-999',
  'throttle',
  'expire-token',
  'bad-credentials',
  'permission',
  'drop',
  'hang',
  'truncated-json',
  'html',
  'wrong-content-type',
  'malformed-record',
  'repeat-page',
  'skip-rows',
  { delayMs: 300 },
];
const name = (f: MockFault) => (typeof f === 'string' ? f : `delay ${f.delayMs} ms`);

/** mulberry32: the mixed rounds are random but the same on every run. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Snapshot = Map<string, Coupon>;

const tally = {
  faultsInjected: 0,
  faultKinds: 0,
  syncs: 0,
  syncsCompleted: 0,
  syncsFailedSafely: 0,
  recordsLost: 0,
  mixes: 0,
  pagesChecked: 0,
  firstSyncs: 0,
  itemCalls: 0,
};

describe('sync under faults', () => {
  let mock: MockShopApi;
  let lookup: ShopLookup;
  const random = prng(20261122);
  let serial = 0;

  beforeAll(async () => {
    mock = await startMock();
    lookup = lookupFor(mock, {
      requestTimeoutMs: 300,
      retry: { retries: 3, unansweredRetries: 1, baseDelayMs: 5, maxDelayMs: 20 },
    });
    expect((await lookup.sync()).ok).toBe(true);
  });
  afterAll(async () => {
    await lookup.close();
    await mock.close();
    mkdirSync('test-results', { recursive: true });
    writeFileSync('test-results/faults.json', `${JSON.stringify(tally, null, 2)}\n`);
    console.log(`fault suite: ${JSON.stringify(tally)}`);
  });

  async function local(of: ShopLookup = lookup): Promise<Snapshot> {
    const answer = await next(of.coupons()); // (how fast lookups answer is the bench's to say, not this test's)
    return new Map(answer.data.map((c) => [c.coupon_code, c]));
  }

  const same = (a: Snapshot, b: Snapshot) => a.size === b.size && [...a].every(([k, v]) => sameRecord(v, b.get(k)));

  /**
   * Runs a sync holding each list request until `check` has looked at the local data: the invariants during the
   * sync, page by page (a page is requested only once the one before was answered, so one is held at a time).
   */
  async function steppedSync(of: ShopLookup, check: (page: number) => Promise<void>): Promise<SyncReport> {
    const running = of.sync();
    const ended = running.then(() => null);
    for (let step = 1; ; step++) {
      const hold = mock.hold({ path: LIST });
      const held = await Promise.race([hold.arrived, ended]);
      if (held === null) {
        hold.release();
        return running;
      }
      await check(step);
      tally.pagesChecked++;
      hold.release();
    }
  }

  /** During a re-sync, lookups answer from the last complete snapshot, whatever the listing has reached. */
  const unchangedDuringSync = (before: Snapshot, label: string) => async (step: number) => {
    expect(same(await local(), before), `${label}, during the sync (request ${step})`).toBe(true);
  };

  /** What a complete, clean listing of the mock gives now. */
  function upstream(): Snapshot {
    const { records } = parseRecords('coupon', mock.data.coupons, 'data.list');
    return new Map(records.map((c) => [c.coupon_code, c]));
  }

  /** Upstream changes between syncs: a few renamed, one removed, one added. */
  function changeUpstream() {
    for (let i = 0; i < 3; i++) {
      const row = mock.data.coupons[Math.floor(random() * mock.data.coupons.length)]!;
      mock.upsertCoupon({ ...row, name: `바뀐 쿠폰 ${++serial}` });
    }
    const victim = mock.data.coupons[5 + Math.floor(random() * (mock.data.coupons.length - 5))]!;
    mock.removeCoupon(String(victim.coupon_code));
    mock.upsertCoupon({
      coupon_code: `NEW-${++serial}`,
      name: `새 쿠폰 ${serial}`,
      status: 'progress',
      apply_sale_price: 1000,
    });
  }

  function rejectedCodes(report: SyncReport): string[] {
    return report.errors
      .filter((e) => e.code === 'invalid_record')
      .map((e) => JSON.parse(/coupon (".*?") was rejected/.exec(e.message)![1]!) as string);
  }

  /** The new snapshot as it should be stored: rejected records keep their last good copy (or stay absent). */
  function expectedAfter(before: Snapshot, after: Snapshot, rejected: string[]): Snapshot {
    const expected = new Map(after);
    for (const code of rejected) {
      if (before.has(code)) expected.set(code, before.get(code)!);
      else expected.delete(code);
    }
    return expected;
  }

  async function checkInvariants(before: Snapshot, fresh: Snapshot, report: SyncReport, label: string) {
    tally.syncs++;
    const now = await local();
    const asNew = expectedAfter(before, fresh, rejectedCodes(report));
    // the last complete snapshot, or the new one: never a mix, never emptied
    const isOld = same(now, before);
    const isNew = same(now, asNew);
    expect({ label, isOld, isNew }).toMatchObject({ label, ...(report.ok ? { isNew: true } : {}) });
    expect(isOld || isNew, `${label}: local data is neither the last snapshot nor the new one`).toBe(true);
    // no record lost: whatever the API still has and we had, we still have
    const lost = [...before.keys()].filter((code) => fresh.has(code) && !now.has(code));
    tally.recordsLost += lost.length;
    expect(lost, label).toEqual([]);
    // status tells the truth, in words
    const status = await next(lookup.status());
    if (report.ok) {
      tally.syncsCompleted++;
      expect(status.phase, label).toBe('idle');
      expect(status.lastError?.code ?? null, label).toBe(report.errors.at(-1)?.code ?? null);
    } else {
      tally.syncsFailedSafely++;
      expect(['error', 'offline'], label).toContain(status.phase);
      expect(status.lastError?.code, label).toBe(report.errors.at(-1)!.code);
    }
    for (const e of report.errors) {
      expect(e.code, label).not.toBe('internal_error');
      expect(e.message.length, label).toBeGreaterThan(30);
    }
  }

  async function recover(label: string) {
    mock.clearFaults();
    const before = await local();
    const fresh = upstream();
    const report = await lookup.sync();
    expect(report.ok, `${label}: recovery sync`).toBe(true);
    await checkInvariants(before, fresh, report, `${label} (recovery)`);
  }

  it.each(ALL_FAULTS.map((f) => [name(f), f] as const))('keeps the invariants under %s', async (label, fault) => {
    const before = await local();
    changeUpstream();
    const fresh = upstream();
    const page = 1 + Math.floor(random() * 3);
    mock.inject(fault, { path: LIST, after: page - 1 });
    tally.faultsInjected++;
    tally.faultKinds++;
    const report = await steppedSync(lookup, unchangedDuringSync(before, label));
    await checkInvariants(before, fresh, report, label);
    await recover(label);
  });

  it.each([1, 2])(
    'keeps the invariants when the pages shift under the listing after page %i (a coupon of a page read is deleted, one created: the count unchanged)',
    async (page) => {
      const label = `pages shifted after page ${page}`;
      const before = await local();
      const gone = String(mock.data.coupons[page * 100 - 50]!.coupon_code);
      const skipped = String(mock.data.coupons[page * 100]!.coupon_code); // first of the next page: moves onto the page read
      const count = mock.data.coupons.length;
      const report = await steppedSync(lookup, async (step) => {
        await unchangedDuringSync(before, label)(step);
        if (step !== page + 1) return; // page `page` was answered, the next one is held
        mock.removeCoupon(gone);
        mock.upsertCoupon({
          coupon_code: `NEW-${++serial}`,
          name: `새 쿠폰 ${serial}`,
          status: 'progress',
          apply_sale_price: 1000,
        });
      });
      tally.faultsInjected++;
      expect(mock.data.coupons).toHaveLength(count);
      expect(report.ok, label).toBe(true);
      await checkInvariants(before, upstream(), report, label);
      const now = await local();
      expect([now.has(skipped), now.has(gone)], label).toEqual([true, false]);
    },
  );

  it('keeps the invariants through 24 syncs with two or three faults each', async () => {
    for (let round = 1; round <= 24; round++) {
      const before = await local();
      changeUpstream();
      const fresh = upstream();
      const faults: string[] = [];
      const count = 2 + Math.floor(random() * 2);
      for (let i = 0; i < count; i++) {
        const fault = ALL_FAULTS[Math.floor(random() * ALL_FAULTS.length)]!;
        mock.inject(fault, { path: LIST, after: Math.floor(random() * 4) });
        faults.push(name(fault));
      }
      tally.faultsInjected += count;
      tally.mixes++;
      const report = await steppedSync(lookup, unchangedDuringSync(before, `round ${round}`));
      await checkInvariants(before, fresh, report, `round ${round}: ${faults.join(' + ')}`);
      await recover(`round ${round}`);
    }
  }, 120_000);

  it('keeps the invariants of a first sync into an empty database under every fault, during it and after', async () => {
    for (const fault of ALL_FAULTS) {
      const label = `first sync under ${name(fault)}`;
      const till = lookupFor(mock, {
        requestTimeoutMs: 300,
        retry: { retries: 3, unansweredRetries: 1, baseDelayMs: 5, maxDelayMs: 20 },
      });
      try {
        const fresh = upstream();
        // a first sync shows pages as they come: whatever shows is a record the API has, as the API has it
        const onlyUpstream = async (step: number) => {
          const now = await local(till);
          const foreign = [...now].filter(([code, c]) => !sameRecord(c, fresh.get(code)));
          expect(
            foreign.map(([code]) => code),
            `${label}, during the sync (request ${step})`,
          ).toEqual([]);
        };
        mock.inject(fault, { path: LIST, after: Math.floor(random() * 3) });
        tally.faultsInjected++;
        tally.firstSyncs++;
        tally.syncs++;
        const report = await steppedSync(till, onlyUpstream);
        await onlyUpstream(0);
        const status = await next(till.status());
        if (report.ok) {
          tally.syncsCompleted++;
          expect(same(await local(till), expectedAfter(new Map(), fresh, rejectedCodes(report))), label).toBe(true);
        } else {
          tally.syncsFailedSafely++;
          // an unfinished first listing vouches for nothing
          expect(status.lastSyncedAt.coupons, label).toBeNull();
          expect(status.lastError?.code, label).toBe(report.errors.at(-1)!.code);
        }
        for (const e of report.errors) expect(e.code, label).not.toBe('internal_error');
        mock.clearFaults();
        expect((await till.sync()).ok, `${label}: recovery sync`).toBe(true);
        expect(same(await local(till), fresh), `${label}: after recovery`).toBe(true);
      } finally {
        await till.close();
      }
    }
  }, 60_000);

  it.each(ALL_FAULTS.map((f) => [name(f), f] as const))(
    'keeps the single-item paths right under %s: validateCoupon online, read-through, prefetchIssuedCoupons',
    async (label, fault) => {
      const meaningful = (errors: { code: string; message: string }[]) => {
        for (const e of errors) {
          expect(e.code, label).not.toBe('internal_error');
          expect(e.message.length, label).toBeGreaterThan(30);
        }
      };
      // the three paths at once, each with its fault (a throttle pauses them together, as it would at a till)
      const row = mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!;
      const oldCopy = (await local()).get('WELCOME10')!;
      mock.upsertCoupon({ ...row, name: `바뀐 쿠폰 ${++serial}` });
      const newCopy = upstream().get('WELCOME10')!;
      const [readCode, prefetched] = [`IC-FAULT-${++serial}`, `IC-FAULT-${++serial}`];
      for (const code of [readCode, prefetched])
        mock.upsertIssuedCoupon({ ...mock.data.issuedCoupons[0]!, coupon_issue_code: code });
      for (const path of [
        '/v2/shop/coupons/WELCOME10',
        `/v2/shop/issue-coupons/${readCode}`,
        `/v2/shop/issue-coupons/${prefetched}`,
      ]) {
        mock.inject(fault, { path });
      }
      const [verdict, read, report] = await Promise.all([
        // validateCoupon online: a verdict, never a rejection
        lookup.validateCoupon('WELCOME10', { amount: 32000 }),
        // read-through of an issued coupon the till never saw: its record, or an error saying why; never "not found"
        next(lookup.issuedCoupon(readCode), (r) => !r.fetching && (r.data !== null || r.error !== null)),
        // prefetchIssuedCoupons: a report, never a rejection
        lookup.prefetchIssuedCoupons([prefetched]),
      ]);
      mock.clearFaults();
      // a record the API sent that cannot be read leaves the copy held confirmed by nothing: it never passes
      if (fault === 'malformed-record')
        expect(verdict, label).toMatchObject({ ok: false, reason: 'unreadable', source: 'local' });
      else expect(verdict, label).toMatchObject({ ok: true, discount: 3200 });
      const held = (await local()).get('WELCOME10');
      // the local copy is the old one or the API's new one, and the new one when the verdict came from the API
      expect(sameRecord(held, newCopy) || sameRecord(held, oldCopy), `${label}: validateCoupon kept a good copy`).toBe(
        true,
      );
      if (verdict.source === 'network') expect(sameRecord(held, newCopy), label).toBe(true);
      if (read.data === null) meaningful([read.error!]);
      else expect(read.data.coupon_issue_code, label).toBe(readCode);
      meaningful(report.errors);
      if (report.ok) {
        mock.setDown(true); // offline: only what the prefetch stored answers
        const stored = await next(lookup.issuedCoupon(prefetched));
        mock.setDown(false);
        expect(stored.data?.coupon_issue_code, label).toBe(prefetched);
      }
      tally.faultsInjected += 3;
      tally.itemCalls += 3;
    },
  );

  it('stops at once on refused credentials and permissions instead of retrying', async () => {
    for (const fault of ['bad-credentials', 'permission'] as const) {
      mock.resetRequests();
      mock.inject(fault, { path: LIST });
      tally.faultsInjected++;
      const report = await lookup.sync();
      expect(report.ok).toBe(false);
      expect(report.errors.at(-1)?.code).toBe(fault === 'permission' ? 'permission_denied' : 'bad_credentials');
      const hit = mock.requests.findIndex((r) => r.fault === fault);
      expect(mock.requests.slice(hit + 1).filter((r) => r.path === LIST)).toEqual([]);
      await recover(fault);
    }
  });

  it('waits out a throttle answer for its Retry-After, then goes on', async () => {
    mock.resetRequests();
    mock.inject('throttle', { path: LIST, after: 1 });
    tally.faultsInjected++;
    const report = await lookup.sync();
    expect(report.ok).toBe(true);
    const throttled = mock.requests.find((r) => r.fault === 'throttle')!;
    const retried = mock.requests.find((r) => r.path === LIST && r.at > throttled.at)!;
    expect(retried.at - throttled.at).toBeGreaterThanOrEqual(1000);
  });

  it('shows a Retry-After pause in status(), with when it ends, and takes a year-long one as ten minutes', async () => {
    // a gateway that asks for a year
    const yearLong: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!res.headers.has('retry-after')) return res;
      const headers = new Headers(res.headers);
      headers.set('retry-after', String(365 * 24 * 3600));
      return new Response(await res.text(), { status: res.status, headers });
    };
    const till = lookupFor(mock, { fetch: yearLong });
    try {
      mock.inject('throttle', { path: LIST });
      const syncing = till.sync();
      const waiting = await next(till.status(), (s) => s.phase === 'waiting');
      expect(waiting.waitingUntil! - Date.now()).toBeGreaterThan(9 * 60_000);
      expect(waiting.waitingUntil! - Date.now()).toBeLessThanOrEqual(10 * 60_000);
      await till.close(); // ends the wait
      expect((await syncing).ok).toBe(false);
    } finally {
      await till.close();
    }
  });
});
