// The bound on the compressed snapshot chunks a store keeps for one shop (memory and Redis alike), so a till asking
// for chunks, however many, cannot grow the store: past it the chunks kept first are dropped (and compressed again by
// whichever instance is asked for them next).

/**
 * Bytes of compressed chunks kept per shop at most: a few full snapshots of a large shop (10,000 coupons are about
 * 110 kB brotli-coded), each version's chunks replacing the last's.
 * @example createMemoryStore({ maxKeptBytes: KEPT_BYTES_PER_SHOP })
 */
export const KEPT_BYTES_PER_SHOP = 16 * 1024 * 1024;
