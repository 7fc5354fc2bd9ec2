// A hub instance's memory budget, in records: which shops' records are held in memory (least recently used first)
// and how many. A shop is served straight from Redis until a till has read its snapshot to the end (or a client
// asked for a list) from there; then its records are loaded, and the least recently used held shops let theirs go
// until the total is within `maxRecords` again. A shop larger than the whole budget stays served from Redis.
import type { FeedMirror, MirrorHolding } from '../feed/feedMirror';

export interface RecordBudget {
  /** The holding hooks of one shop's mirror. */
  forShop(shopId: string): MirrorHolding;
  /** Records held in memory now, over every shop. */
  total(): number;
  /** Shops whose records are held, least recently used first. */
  held(): string[];
}

/** Shops remembered as larger than the whole budget (not loaded again while they are). */
const MAX_TOO_BIG = 10_000;

/** @example const budget = createRecordBudget(500_000); createShopRelay(options, { holding: budget.forShop('s1') }); */
export function createRecordBudget(maxRecords: number): RecordBudget {
  // by mirror (a shop closed and opened again has a new one, and the old one may report after it): insertion order
  // kept by re-inserting on every use, the least recently used first
  const held = new Map<FeedMirror, { shopId: string; size: number }>();
  const tooBig = new Map<string, number>();
  let total = 0;

  function set(shopId: string, mirror: FeedMirror, size: number): void {
    const entry = held.get(mirror);
    if (entry) total -= entry.size;
    if (size === 0) {
      held.delete(mirror);
      return;
    }
    if (entry) entry.size = size;
    else held.set(mirror, { shopId, size });
    total += size;
    if (size > maxRecords) {
      if (tooBig.size >= MAX_TOO_BIG) tooBig.delete(tooBig.keys().next().value!);
      tooBig.set(shopId, size);
      mirror.release(); // (reports size 0: deleted above)
      return;
    }
    // the least recently used others let theirs go (each release reports 0, which takes it off)
    for (const other of held.keys()) {
      if (total <= maxRecords) break;
      if (other !== mirror) other.release();
    }
  }

  return {
    forShop: (shopId) => ({
      lean: true,
      asked(mirror) {
        const big = tooBig.get(shopId);
        if (big !== undefined && big > maxRecords) return;
        void mirror.hold();
      },
      held: (size, mirror) => set(shopId, mirror, size),
      used(mirror) {
        const entry = held.get(mirror);
        if (!entry) return;
        held.delete(mirror);
        held.set(mirror, entry);
      },
    }),
    total: () => total,
    held: () => [...held.values()].map((entry) => entry.shopId),
  };
}
