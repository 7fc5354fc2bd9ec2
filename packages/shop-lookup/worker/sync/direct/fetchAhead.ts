// Pages of a listing requested ahead of the one being stored, so the network and IndexedDB work at the same time
// instead of taking turns. Each request goes out once the one before it has been answered with a success status
// (its headers are in; its body may still be arriving): a throttle answer or any failure is seen before the next
// request is sent, and the rate limiter still decides when each goes out (1 list call per second on the real API).

export interface FetchAhead<T> {
  /** Page `page`: the one already on its way, or a new request. */
  get(page: number): Promise<T>;
  /** Asks for up to `ahead` pages after `page`, up to `last` (once `page` showed the listing is still the same). */
  ahead(page: number, last: number | null): void;
  /** Drops (aborts) every request ahead: the listing starts over or ends. */
  reset(): void;
}

/** Loads one page; calls `answered()` as soon as it knows the answer is a success (headers with a 2xx status). */
export type PageLoader<T> = (page: number, signal: AbortSignal, answered: () => void) => Promise<T>;

/**
 * @example const pages = fetchAhead((n, signal, answered) => client.listCouponRows(n, { signal, onHeaders: (s) => s <
 * 300 && answered() }), 3);
 */
export function fetchAhead<T>(load: PageLoader<T>, ahead: number): FetchAhead<T> {
  let controller = new AbortController();
  const pending = new Map<number, { page: Promise<T>; answered: Promise<void> }>();
  const request = (page: number, after: Promise<void> | undefined) => {
    const { signal } = controller;
    let answered!: () => void;
    const onAnswered = new Promise<void>((resolve) => (answered = resolve));
    const p = after ? after.then(() => load(page, signal, answered)) : load(page, signal, answered);
    // a page that arrived whole was answered too (after retries, say); one that failed lets no request follow it
    p.then(answered, () => undefined);
    pending.set(page, { page: p, answered: onAnswered });
    return p;
  };
  return {
    get(page) {
      const p = pending.get(page)?.page ?? request(page, undefined);
      pending.delete(page);
      return p;
    },
    ahead(page, last) {
      if (last === null) return;
      for (let n = page + 1; n <= Math.min(last, page + ahead); n++) {
        if (!pending.has(n)) request(n, pending.get(n - 1)?.answered);
      }
    },
    reset() {
      controller.abort(new DOMException('The listing moved on without this page.', 'AbortError'));
      controller = new AbortController();
      pending.clear();
    },
  };
}
