// Held requests: a test names which /v2 requests to hold, learns when one arrives, and lets it go when it
// chooses, so an interleaving ("page 2 is in flight while the coupon is re-read") is driven, not waited for.
// A held request is answered from the data as it is at release, as if the API had been slow to read it; with
// `answered`, the answer is made from the data at arrival and only its sending waits (a slow network back).
import { pathMatches } from './faults';
import type { FaultWhen, HoldWhen, MockHold, MockRequestRecord } from './types';

/** A request caught by a hold: it goes on when `released` resolves, before or after its answer is made. */
interface HeldRequest {
  released: Promise<void>;
  answered: boolean;
}

interface PendingHold {
  path: FaultWhen['path'];
  answered: boolean;
  skip: number;
  times: number;
  released: boolean;
  waiting: (() => void)[];
  arrived: (record: MockRequestRecord) => void;
}

export interface HoldList {
  hold(when?: HoldWhen): MockHold;
  /** A hold by its id (the control endpoints name holds so). */
  find(id: number): MockHold | undefined;
  /** The hold this request is caught by, if any. */
  gate(path: string, record: MockRequestRecord): HeldRequest | undefined;
  /** Releases every hold (the mock is closing). */
  releaseAll(): void;
}

/** @example const holds = createHoldList(); const h = holds.hold({ path: '/v2/shop/coupons', after: 1 }); */
export function createHoldList(): HoldList {
  const holds: PendingHold[] = [];
  const byId = new Map<number, MockHold>();
  const release = (h: PendingHold) => {
    h.released = true;
    const at = holds.indexOf(h);
    if (at >= 0) holds.splice(at, 1);
    for (const go of h.waiting.splice(0)) go();
  };
  return {
    hold(when = {}) {
      let arrived!: (record: MockRequestRecord) => void;
      const first = new Promise<MockRequestRecord>((resolve) => (arrived = resolve));
      const h: PendingHold = {
        path: when.path,
        answered: when.answered === true,
        skip: when.after ?? 0,
        times: when.times ?? 1,
        released: false,
        waiting: [],
        arrived,
      };
      holds.push(h);
      let caught = false;
      void first.then(() => (caught = true));
      const handle: MockHold = {
        id: byId.size + 1,
        arrived: first,
        get caught() {
          return caught;
        },
        get held() {
          return h.waiting.length;
        },
        release: () => release(h),
      };
      byId.set(handle.id, handle);
      return handle;
    },
    find: (id) => byId.get(id),
    gate(path, record) {
      let h: PendingHold | undefined;
      for (const x of holds) {
        if (x.times <= 0 || !pathMatches(x.path, path)) continue;
        if (x.skip > 0) x.skip--;
        else h ??= x;
      }
      if (!h) return undefined;
      h.times--;
      record.fault ??= 'held';
      const released = new Promise<void>((resolve) => h.waiting.push(resolve));
      h.arrived(record);
      return { released, answered: h.answered };
    },
    releaseAll() {
      for (const h of [...holds]) release(h);
    },
  };
}
