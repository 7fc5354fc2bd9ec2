// A bound on the upstream listings one hub instance runs at once, over all its shops: a shop's sync takes a slot
// before it tries its shop's lease, and gives it back when the lease is released or lost. A shop whose slot is not
// free waits here, while another instance with a free slot may take that shop's lease meanwhile.
import type { Lease, RelayStore } from '../store/relayStore';

export interface ListingSlots {
  /** Resolves with the function that gives the slot back (once), when one is free; rejects when `signal` aborts. */
  take(signal: AbortSignal, shopId: string): Promise<() => void>;
  /** The shops holding a slot now. */
  running(): string[];
  waiting(): number;
}

/** @example const slots = createListingSlots(4); const give = await slots.take(signal, 'shop-1'); give(); */
export function createListingSlots(max: number): ListingSlots {
  let used = 0;
  const holders = new Map<object, string>();
  const queue: { grant: () => void }[] = [];
  const grant = (shopId: string): (() => void) => {
    used++;
    const slot = {};
    holders.set(slot, shopId);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      used--;
      holders.delete(slot);
      queue.shift()?.grant();
    };
  };
  return {
    take(signal, shopId) {
      if (signal.aborted) return Promise.reject(signal.reason);
      if (used < max) return Promise.resolve(grant(shopId));
      return new Promise((resolve, reject) => {
        const waiter = {
          grant: () => {
            signal.removeEventListener('abort', abort);
            resolve(grant(shopId));
          },
        };
        const abort = (): void => {
          queue.splice(queue.indexOf(waiter), 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', abort, { once: true });
        queue.push(waiter);
      });
    },
    running: () => [...holders.values()],
    waiting: () => queue.length,
  };
}

/**
 * The store as one shop's sync sees it in a hub: acquiring the sync lease first takes a listing slot.
 * @example createShopRelay({ ..., store: gateListings(store, slots, closing.signal, shopId) })
 */
export function gateListings(store: RelayStore, slots: ListingSlots, signal: AbortSignal, shopId: string): RelayStore {
  const held = new Map<string, () => void>();
  const giveBack = (lease: Lease): void => {
    held.get(lease.name)?.();
    held.delete(lease.name);
  };
  return {
    ...store,
    async acquireLease(name, owner, ttlMs) {
      const give = await slots.take(signal, shopId);
      try {
        const lease = await store.acquireLease(name, owner, ttlMs);
        if (!lease) give();
        else {
          held.get(name)?.(); // taken again while held: one slot for one lease
          held.set(name, give);
        }
        return lease;
      } catch (error) {
        give();
        throw error;
      }
    },
    async renewLease(lease, ttlMs) {
      const renewed = await store.renewLease(lease, ttlMs);
      if (!renewed) giveBack(lease);
      return renewed;
    },
    async releaseLease(lease) {
      giveBack(lease);
      await store.releaseLease(lease);
    },
  };
}
