// "Hold until released": the next matching /v2 request is counted (rate limit, request log) on arrival like any
// other, but its answer waits until the test releases it. Lets a test act at an exact point of a listing (kill the
// client mid-page, say) without waiting on wall time.
import { pathMatches, type FaultTarget } from './faults';
import type { HoldWhen, MockHold, MockRequestRecord } from './types';

interface PendingHold {
  when: HoldWhen;
  skip: number;
  reached: (record: MockRequestRecord) => void;
  released: Promise<void>;
  release: () => void;
  taken: boolean;
}

export interface HoldList {
  hold(when?: HoldWhen): MockHold;
  /** The release promise this request must wait for, or undefined when no hold matches it. */
  take(target: FaultTarget, record: MockRequestRecord): Promise<void> | undefined;
  /** Releases every hold (the mock is closing). */
  releaseAll(): void;
}

/** @example const holds = createHoldList(); const hold = holds.hold({ path: /^\/v2\/shop\/coupons$/, page: 2 }); */
export function createHoldList(): HoldList {
  const pending: PendingHold[] = [];
  const all = new Set<() => void>();
  return {
    hold(when = {}) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let reached!: (record: MockRequestRecord) => void;
      const reachedPromise = new Promise<MockRequestRecord>((resolve) => (reached = resolve));
      const entry: PendingHold = { when, skip: when.after ?? 0, reached, released, release, taken: false };
      pending.push(entry);
      all.add(release);
      return {
        reached: reachedPromise,
        release() {
          // released before any request matched: it holds nothing any more
          if (!entry.taken) pending.splice(pending.indexOf(entry), 1);
          release();
        },
      };
    },
    take(target, record) {
      const at = pending.findIndex((entry) => {
        if (!pathMatches(entry.when.path, target.path)) return false;
        if (entry.when.page !== undefined && entry.when.page !== target.page) return false;
        if (entry.skip > 0) {
          entry.skip--;
          return false;
        }
        return true;
      });
      if (at < 0) return undefined;
      const [entry] = pending.splice(at, 1);
      entry!.taken = true;
      entry!.reached(record);
      return entry!.released;
    },
    releaseAll() {
      for (const release of all) release();
    },
  };
}
