// The hub's walk over every shop the host names, so shops nobody asks for are listed too: each is probed in Redis
// (due? someone else's lease?), a due one is listed by this instance (made hot for the time of its listing), and a
// shop whose lease another instance holds is looked at again the moment that lease would lapse: a crashed
// instance's shops are taken over within the lease time. Workers bound how many shops one instance visits at once;
// instances start their walks at random places, so three instances share the shops instead of racing in step.
import type { ServerLog } from '../door/serverLog';
import type { ShopProbe } from '../store/redis/redisShopProbe';

export interface ShopSweepOptions {
  /** The shops to walk (the host's list). */
  shops: () => Iterable<string> | Promise<Iterable<string>>;
  probe: (shopId: string) => Promise<ShopProbe>;
  /** Lists what is due of the shop (resolves when done). */
  list: (shopId: string) => Promise<void>;
  /** Shops visited at once. */
  workers: number;
  /** How often a walk starts by itself, ms. */
  intervalMs: number;
  now: () => number;
  log: ServerLog;
}

export interface ShopSweep {
  /** Walks every shop once (joins a walk under way); resolves when this walk's listings are done. */
  sweep(): Promise<void>;
  /** Shops waiting for another instance's lease to lapse. */
  watching(): string[];
  close(): void;
}

/** After a lease's expiry, ms: the holder's last renewal has surely landed or not. */
const LAPSE_MARGIN_MS = 25;

/**
 * @example const sweep = createShopSweep({ shops, probe, list, workers: 4, intervalMs: 60_000, now: Date.now, log });
 */
export function createShopSweep(options: ShopSweepOptions): ShopSweep {
  const { now, log } = options;
  let closed = false;
  let walking: Promise<void> | null = null;
  const rechecks = new Map<string, ReturnType<typeof setTimeout>>();

  function watch(shopId: string, until: number): void {
    if (closed || rechecks.has(shopId)) return;
    const timer = setTimeout(
      () => {
        rechecks.delete(shopId);
        void visit(shopId);
      },
      Math.max(0, until - now()) + LAPSE_MARGIN_MS,
    );
    timer.unref?.();
    rechecks.set(shopId, timer);
  }

  async function visit(shopId: string): Promise<void> {
    if (closed) return;
    try {
      const probe = await options.probe(shopId);
      if (closed) return;
      // another instance lists it: look again when its lease would lapse (it renews it while alive)
      if (probe.leaseUntil !== null) return watch(shopId, probe.leaseUntil);
      if (probe.due) await options.list(shopId);
    } catch (error) {
      if (!closed) log('warn', `shop ${shopId}: the sweep could not list it`, error);
    }
  }

  async function walk(): Promise<void> {
    const all = [...(await options.shops())];
    const start = all.length === 0 ? 0 : Math.floor(Math.random() * all.length);
    const queue = [...all.slice(start), ...all.slice(0, start)];
    const worker = async (): Promise<void> => {
      for (let shopId = queue.shift(); shopId !== undefined && !closed; shopId = queue.shift()) await visit(shopId);
    };
    await Promise.all(Array.from({ length: Math.max(1, options.workers) }, worker));
  }

  function sweep(): Promise<void> {
    walking ??= walk()
      .catch((error: unknown) => log('warn', 'the sweep over the shops failed', error))
      .finally(() => (walking = null));
    return walking;
  }

  const timer = setInterval(() => void sweep(), options.intervalMs);
  timer.unref?.();

  return {
    sweep,
    watching: () => [...rechecks.keys()],
    close() {
      closed = true;
      clearInterval(timer);
      for (const t of rechecks.values()) clearTimeout(t);
      rechecks.clear();
    },
  };
}
