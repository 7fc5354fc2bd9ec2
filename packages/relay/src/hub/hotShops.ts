// The shops hot in one hub instance, least recently asked first: at most `max` of them; beyond it the least recently
// asked shop with no request under way is closed (its data stays in its store, Redis) and made again when asked.
export interface HotShop<T> {
  shopId: string;
  value: T;
  /** Requests of this shop being answered now: a shop is not evicted under them. */
  inFlight: number;
}

export interface HotShops<T> {
  get(shopId: string): HotShop<T> | undefined;
  /** Marks it the most recently asked. */
  touch(entry: HotShop<T>): void;
  /** Adds a shop; resolves the shops evicted to stay within `max` (the caller closes them). */
  add(shopId: string, value: T): { entry: HotShop<T>; evicted: HotShop<T>[] };
  remove(shopId: string): HotShop<T> | undefined;
  /** Shops evicted now that a request ended (a shop over `max` waited for its requests). */
  trim(): HotShop<T>[];
  ids(): string[];
  all(): HotShop<T>[];
}

/** @example const hot = createHotShops<ShopRelay>(100); const { evicted } = hot.add('s1', relay); */
export function createHotShops<T>(max: number): HotShops<T> {
  // a Map keeps insertion order: re-inserting on every touch keeps the least recently asked first
  const shops = new Map<string, HotShop<T>>();
  const trim = (): HotShop<T>[] => {
    const evicted: HotShop<T>[] = [];
    for (const entry of shops.values()) {
      if (shops.size <= max) break;
      if (entry.inFlight > 0) continue;
      shops.delete(entry.shopId);
      evicted.push(entry);
    }
    return evicted;
  };
  return {
    get: (shopId) => shops.get(shopId),
    touch(entry) {
      if (shops.get(entry.shopId) !== entry) return;
      shops.delete(entry.shopId);
      shops.set(entry.shopId, entry);
    },
    add(shopId, value) {
      const entry: HotShop<T> = { shopId, value, inFlight: 0 };
      shops.delete(shopId);
      shops.set(shopId, entry);
      entry.inFlight++; // the newest is never the one evicted for itself
      const evicted = trim();
      entry.inFlight--;
      return { entry, evicted };
    },
    remove(shopId) {
      const entry = shops.get(shopId);
      shops.delete(shopId);
      return entry;
    },
    trim,
    ids: () => [...shops.keys()],
    all: () => [...shops.values()],
  };
}
